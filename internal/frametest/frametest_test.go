package frametest

import (
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// The command comes back with its code, fields and body, decoded anew.
func TestReframe(t *testing.T) {
	for _, st := range []byte{protocol.SerializeJSON, protocol.SerializeRocketMQ} {
		c := protocol.NewRequest(protocol.ReqHeartBeat, map[string]string{"k": "v"}, []byte("body"))
		c.SerializeType = st
		got := Reframe(t, c)
		if got == c || got.Code != c.Code || got.Fields()["k"] != "v" || string(got.Body) != "body" {
			t.Fatalf("%v: got %+v", st, got)
		}
	}
}
