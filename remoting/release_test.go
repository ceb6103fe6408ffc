package remoting

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// A response's ReleaseBody comes once its body is no longer the
// connection's, never before: each handler here answers with a body of its
// own, large (written in place) or small (copied), and its ReleaseBody
// scribbles over the body as a pool's next user would. 64 calls in flight
// on one connection make answers queue behind one another's writes, where
// the goroutine that writes a body is not the one that sent it. Every
// client must still get its own bytes, and every ReleaseBody run once.
func TestReleaseBodyOnlyAfterTheWrite(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		var released, calls atomic.Int64
		handler := func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			calls.Add(1)
			n := 100
			if req.Ext("big") == "1" {
				n = 40 << 10
			}
			resp := protocol.NewResponse(req, protocol.RespSuccess, "")
			resp.Body = bytes.Repeat([]byte(req.Ext("k")), n/len(req.Ext("k")))
			var once atomic.Bool
			resp.ReleaseBody = func() {
				if !once.CompareAndSwap(false, true) {
					t.Errorf("ReleaseBody of %s called twice", req.Ext("k"))
				}
				clear(resp.Body)
				released.Add(1)
			}
			return resp
		}
		s := startServer(t, transport, nil, map[int16]Handler{protocol.ReqPullMessage: handler})
		cl := newClient(t, nil)
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Go(func() {
				for i := range 20 {
					k := fmt.Sprintf("<%d.%d>", g, i)
					req := protocol.NewRequest(protocol.ReqPullMessage, map[string]string{"k": k, "big": fmt.Sprint((g + i) % 2)}, nil)
					resp, err := cl.Invoke(context.Background(), s.Addr(), req)
					if err != nil {
						t.Error(err)
						return
					}
					if want := bytes.Repeat([]byte(k), len(resp.Body)/len(k)); len(resp.Body) < 100-len(k) || !bytes.Equal(resp.Body, want) {
						t.Errorf("%s: got %d bytes starting %q: the body was reused before its write", k, len(resp.Body), resp.Body[:min(len(resp.Body), 16)])
						return
					}
				}
			})
		}
		wg.Wait()
		// The last releases may follow the client's reading of the
		// answers: Close waits for the goroutines that write them.
		s.Close()
		if released.Load() != calls.Load() {
			t.Fatalf("%d of %d answers released", released.Load(), calls.Load())
		}
	})
}

// A response sent on a connection already closed is released at once: its
// body is nobody's.
func TestReleaseBodyWhenClosed(t *testing.T) {
	tr := &captureTransport{}
	c := newConn(&poolOwner{}, tr, "peer", "local", 1<<24, 0, quietLogger())
	req := protocol.NewRequest(protocol.ReqPullMessage, nil, nil)
	var released int
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = make([]byte, 40<<10)
	resp.ReleaseBody = func() { released++ }
	c.closeWith(fmt.Errorf("gone"))
	if err := c.send(resp, false); err == nil {
		t.Fatal("send on a closed connection succeeded")
	}
	if released != 1 || len(tr.writes) != 0 {
		t.Fatalf("released %d times, %d writes; want once, none", released, len(tr.writes))
	}
}
