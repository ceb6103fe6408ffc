package remoting

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestRawAnswer: a call with CallOptions.RawAnswer gets its answer's ext
// fields undecoded, readable through Ext, Fields and a typed header; any
// other call, sync or async, gets them in ExtFields as before. Both
// transports, both header encodings.
func TestRawAnswer(t *testing.T) {
	for _, tr := range []string{TransportNetpoll, TransportStd} {
		for _, ser := range []byte{protocol.SerializeJSON, protocol.SerializeRocketMQ} {
			t.Run(fmt.Sprintf("%s/ser%d", tr, ser), func(t *testing.T) {
				answer := func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
					resp := protocol.NewResponse(req, protocol.RespSuccess, "")
					resp.MoreExt = protocol.SendMessageResponseHeader{MsgID: "ID", QueueID: 3, QueueOffset: 66, MsgRegion: "DefaultRegion", TraceOn: "true"}.Append(nil)
					return resp
				}
				s := startServer(t, tr, nil, map[int16]Handler{codeEcho: answer})
				cl := newClient(t, nil)
				req := protocol.NewRequest(codeEcho, nil, nil)
				req.SerializeType = ser

				raw, err := cl.InvokeWith(context.Background(), s.Addr(), req, CallOptions{RawAnswer: true})
				if err != nil {
					t.Fatal(err)
				}
				if raw.ExtFields != nil {
					t.Fatalf("a raw answer was decoded into a map: %v", raw.ExtFields)
				}
				var h protocol.SendMessageResponseHeader
				if err := h.DecodeCommand(raw); err != nil || h.MsgID != "ID" || h.QueueID != 3 || h.QueueOffset != 66 {
					t.Fatalf("typed read of a raw answer: %+v %v", h, err)
				}
				if raw.Ext("queueOffset") != "66" || raw.Fields()["msgId"] != "ID" {
					t.Fatalf("Ext/Fields of a raw answer: %v", raw.ExtFields)
				}

				plain, err := cl.Invoke(context.Background(), s.Addr(), req)
				if err != nil {
					t.Fatal(err)
				}
				if plain.ExtFields["queueOffset"] != "66" {
					t.Fatalf("a plain call's answer has ExtFields %v", plain.ExtFields)
				}
				got := make(chan *protocol.Command, 1)
				if err := cl.InvokeAsync(context.Background(), s.Addr(), req, func(resp *protocol.Command, err error) {
					if err != nil {
						t.Error(err)
					}
					got <- resp
				}); err != nil {
					t.Fatal(err)
				}
				if resp := <-got; resp == nil || resp.ExtFields["msgId"] != "ID" {
					t.Fatalf("an async call's answer: %v", resp)
				}
			})
		}
	}
}

// TestCallOptionsTimeout: CallOptions.Timeout bounds a call in place of the
// configured call timeout, a call after a timed-out one is not ended by
// its timer (TestPooledCallTimer checks the pooled timer itself), and a ctx
// deadline that comes first still wins.
func TestCallOptionsTimeout(t *testing.T) {
	var mu sync.Mutex
	delay := map[string]time.Duration{}
	held := func(_ context.Context, c *Conn, req *protocol.Command) *protocol.Command {
		mu.Lock()
		d, ok := delay[req.Ext("k")]
		mu.Unlock()
		if !ok {
			return nil
		}
		time.Sleep(d)
		return echo(context.Background(), c, req)
	}
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{codeHold: held})
	cl := newClient(t, func(c *ClientConfig) { c.CallTimeout = 10 * time.Second })
	mu.Lock()
	delay["slowish"] = 80 * time.Millisecond
	mu.Unlock()
	req := func(k string) *protocol.Command {
		return protocol.NewRequest(codeHold, map[string]string{"k": k}, nil)
	}

	// Dialled first: a call that dials spends part of its timeout on it.
	if _, err := cl.Conn(context.Background(), s.Addr()); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 5; round++ {
		start := time.Now()
		_, err := cl.InvokeWith(context.Background(), s.Addr(), req("never"), CallOptions{Timeout: 30 * time.Millisecond})
		var te *TimeoutError
		if !errors.As(err, &te) || te.After != 30*time.Millisecond {
			t.Fatalf("round %d: a call past its own timeout: %v", round, err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("round %d: the call's timeout was not its own: it waited %v", round, el)
		}
		// Often the timed-out call comes back from the pool for this one.
		resp, err := cl.InvokeWith(context.Background(), s.Addr(), req("slowish"), CallOptions{Timeout: 10 * time.Second})
		if err != nil || resp.Ext("k") != "slowish" {
			t.Fatalf("round %d: a call after a timed-out one: %v %v", round, resp, err)
		}
	}

	// A ctx deadline before the call's timeout ends the call.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := cl.InvokeWith(ctx, s.Addr(), req("never"), CallOptions{Timeout: 10 * time.Second}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx deadline first: %v", err)
	}
	connWithoutPending(t, cl, s.Addr())
}

// TestPooledCallTimer: a pooled call's timer that fired while nobody
// waited on it must not fire again when the call is armed for its next
// use (call.arm, as invoke arms it), and fires at the time it is armed
// for. Tested on one call, not through the
// pool, which may hand another call to the next Get.
func TestPooledCallTimer(t *testing.T) {
	cl := getSyncCall(false)
	cl.arm(time.Millisecond)
	time.Sleep(20 * time.Millisecond) // fired; C not read
	putSyncCall(cl)
	if cl.resp != nil || cl.err != nil || len(cl.done) != 0 {
		t.Fatalf("a pooled call kept its previous outcome: resp %v, err %v, %d done", cl.resp, cl.err, len(cl.done))
	}
	select {
	case <-cl.arm(time.Hour):
		t.Fatal("a pooled call's timer delivered the expiry of its previous use")
	case <-time.After(50 * time.Millisecond):
	}
	putSyncCall(cl)
	// And armed again, it fires at its new time.
	select {
	case <-cl.arm(5 * time.Millisecond):
	case <-time.After(5 * time.Second):
		t.Fatal("a pooled call's timer, armed again, did not fire")
	}
	putSyncCall(cl)
}

// TestGivenRequest: a request given to the call (CallOptions.Give) is sent
// as it is, its opaque and flags set in place, where Invoke sends a copy.
func TestGivenRequest(t *testing.T) {
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{codeEcho: echo})
	cl := newClient(t, nil)
	req := protocol.NewRequest(codeEcho, map[string]string{"k": "v"}, []byte("b"))
	req.Opaque, req.Flag = 0, protocol.FlagOneway
	resp, err := cl.InvokeWith(context.Background(), s.Addr(), req, CallOptions{Give: true})
	if err != nil || resp.Ext("k") != "v" || string(resp.Body) != "b" {
		t.Fatalf("%v %v", resp, err)
	}
	if req.Opaque == 0 || req.Opaque != resp.Opaque || req.Flag != 0 {
		t.Fatalf("the given request was not the one sent: opaque %d (answer's %d), flag %d", req.Opaque, resp.Opaque, req.Flag)
	}
}
