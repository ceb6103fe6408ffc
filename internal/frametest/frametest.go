// Package frametest passes a command through RocketMQ's wire format for
// tests: encoded as a peer sends it, decoded as a server reads it, so a
// check sees what it would see behind a real connection (ext fields left
// undecoded for a send's typed header, say).
package frametest

import (
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Reframe is c as a server decodes it from the frame c encodes to.
func Reframe(t testing.TB, c *protocol.Command) *protocol.Command {
	t.Helper()
	frame, err := protocol.EncodeFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := protocol.DecodeFrame(frame[4:])
	if err != nil {
		t.Fatal(err)
	}
	return got
}
