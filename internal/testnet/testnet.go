// Package testnet holds the network fixtures tests of any package share.
// It imports nothing of Runnel's, so remoting's own tests may use it.
package testnet

import (
	"net"
	"testing"
)

// DeadAddr is a loopback host:port nobody listens on: a port the system
// handed out and that was closed again, so a dial is refused at once.
func DeadAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
