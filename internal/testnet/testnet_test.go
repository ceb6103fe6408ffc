package testnet

import (
	"net"
	"testing"
)

// A dial of DeadAddr fails.
func TestDeadAddrRefuses(t *testing.T) {
	addr := DeadAddr(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded", addr)
	}
}
