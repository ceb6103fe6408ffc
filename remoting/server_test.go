package remoting

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/remoting/protocol"
)

const (
	codeEcho  int16 = 1001
	codeHold  int16 = 1002
	codeDefer int16 = 1003
)

func TestEchoAndUnknownCode(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		cl := newClient(t, nil)
		ctx := context.Background()

		req := protocol.NewRequest(codeEcho, map[string]string{"k": "v"}, []byte("hello"))
		resp, err := cl.Invoke(ctx, s.Addr(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code != protocol.RespSuccess || string(resp.Body) != "hello" || resp.Ext("k") != "v" || !resp.IsResponse() {
			t.Fatalf("bad echo response %v", resp)
		}

		resp, err = cl.Invoke(ctx, s.Addr(), protocol.NewRequest(999, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code != protocol.RespRequestCodeNotSupported || resp.Remark != "request code 999 not supported" {
			t.Fatalf("unknown code answered %v", resp)
		}

		s.HandleDefault(func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			return protocol.NewResponse(req, protocol.RespSuccess, "default")
		})
		resp, err = cl.Invoke(ctx, s.Addr(), protocol.NewRequest(999, nil, nil))
		if err != nil || resp.Remark != "default" {
			t.Fatalf("default handler: %v %v", resp, err)
		}
	})
}

// A request whose handler is held never delays another on the same
// connection.
func TestHeldRequestDoesNotBlockOthers(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		release := make(chan struct{})
		held := make(chan struct{})
		s := startServer(t, tr, nil, map[int16]Handler{
			codeEcho: echo,
			codeHold: func(ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
				close(held)
				<-release
				return protocol.NewResponse(req, protocol.RespSuccess, "released")
			},
		})
		cl := newClient(t, nil)
		ctx := context.Background()

		heldDone := make(chan *protocol.Command, 1)
		if err := cl.InvokeAsync(ctx, s.Addr(), protocol.NewRequest(codeHold, nil, nil), func(r *protocol.Command, err error) {
			if err != nil {
				t.Error(err)
			}
			heldDone <- r
		}); err != nil {
			t.Fatal(err)
		}
		<-held
		for i := 0; i < 10; i++ {
			resp, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte{byte(i)}))
			if err != nil || resp.Body[0] != byte(i) {
				t.Fatalf("request %d behind a held one: %v %v", i, resp, err)
			}
		}
		if n := len(s.Conns()); n != 1 {
			t.Fatalf("%d server connections, want the one shared", n)
		}
		close(release)
		if r := <-heldDone; r.Remark != "released" {
			t.Fatalf("held response %v", r)
		}
	})
}

func TestDeferredReply(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		parked := make(chan func(), 1)
		s := startServer(t, tr, nil, map[int16]Handler{
			codeDefer: func(ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
				parked <- func() {
					if err := c.Reply(protocol.NewResponse(req, protocol.RespSuccess, "later")); err != nil {
						t.Error(err)
					}
				}
				return nil
			},
		})
		cl := newClient(t, nil)
		done := make(chan *protocol.Command, 1)
		go func() {
			resp, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeDefer, nil, nil))
			if err != nil {
				t.Error(err)
			}
			done <- resp
		}()
		answer := <-parked
		select {
		case r := <-done:
			t.Fatalf("answered before the deferred reply: %v", r)
		default:
		}
		go answer() // from another goroutine than the handler's
		if r := <-done; r == nil || r.Remark != "later" {
			t.Fatalf("deferred response %v", r)
		}
	})
}

func TestServerInvokesClient(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		cl := newClient(t, nil)
		oneway := make(chan *protocol.Command, 1)
		cl.Handle(protocol.ReqGetConsumerRunningInfo, func(_ context.Context, c *Conn, req *protocol.Command) *protocol.Command {
			resp := protocol.NewResponse(req, protocol.RespSuccess, "info for "+req.Ext("consumerGroup"))
			resp.Body = []byte(c.RemoteAddr())
			return resp
		})
		cl.Handle(protocol.ReqNotifyConsumerIDsChanged, func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			oneway <- req
			return protocol.NewResponse(req, protocol.RespSuccess, "must not be sent")
		})
		if _, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeEcho, nil, nil)); err != nil {
			t.Fatal(err)
		}
		conns := s.Conns()
		if len(conns) != 1 {
			t.Fatalf("%d connections", len(conns))
		}
		sc := conns[0]

		resp, err := sc.Invoke(context.Background(), protocol.NewRequest(protocol.ReqGetConsumerRunningInfo, map[string]string{"consumerGroup": "g1"}, nil))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Remark != "info for g1" || string(resp.Body) != s.Addr() {
			t.Fatalf("client answered %v body %q", resp, resp.Body)
		}

		// Unknown codes are refused by the client too.
		resp, err = sc.Invoke(context.Background(), protocol.NewRequest(4242, nil, nil))
		if err != nil || resp.Code != protocol.RespRequestCodeNotSupported {
			t.Fatalf("client on unknown code: %v %v", resp, err)
		}

		if err := sc.InvokeOneway(protocol.NewRequest(protocol.ReqNotifyConsumerIDsChanged, map[string]string{"consumerGroup": "g1"}, nil)); err != nil {
			t.Fatal(err)
		}
		got := <-oneway
		if !got.IsOneway() || got.Ext("consumerGroup") != "g1" {
			t.Fatalf("oneway arrived as %v", got)
		}
		// The connection still works afterwards: the client's response to the
		// oneway request was not sent (an unmatched response would only be
		// logged, so check the pending table stayed clean instead).
		resp, err = sc.Invoke(context.Background(), protocol.NewRequest(protocol.ReqGetConsumerRunningInfo, nil, nil))
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("after oneway: %v %v", resp, err)
		}
	})
}

func TestHooksAndValues(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		var mu sync.Mutex
		var opened, closed []*Conn
		s := startServer(t, tr, func(c *ServerConfig) {
			c.OnConnect = func(c *Conn) {
				c.SetValue("clientID", fmt.Sprintf("client-%d", c.ID()))
				mu.Lock()
				opened = append(opened, c)
				mu.Unlock()
			}
			c.OnClose = func(c *Conn) {
				mu.Lock()
				closed = append(closed, c)
				mu.Unlock()
			}
		}, map[int16]Handler{
			codeEcho: func(_ context.Context, c *Conn, req *protocol.Command) *protocol.Command {
				return protocol.NewResponse(req, protocol.RespSuccess, c.Value("clientID").(string))
			},
		})
		cl := newClient(t, nil)
		resp, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeEcho, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(opened) != 1 || resp.Remark != fmt.Sprintf("client-%d", opened[0].ID()) {
			t.Fatalf("OnConnect saw %d conns; handler saw value %q", len(opened), resp.Remark)
		}
		sc := opened[0]
		mu.Unlock()

		cl.CloseConn(s.Addr())
		select {
		case <-sc.Closed():
		case <-time.After(5 * time.Second):
			t.Fatal("server did not see the client close")
		}
		testwait.For(t, testwait.Default, "OnClose", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(closed) == 1 && closed[0] == sc
		})
		if len(s.Conns()) != 0 {
			t.Fatalf("closed conn still listed")
		}
	})
}

func TestIdleTimeout(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		closedConns := make(chan *Conn, 2)
		s := startServer(t, tr, func(c *ServerConfig) {
			c.IdleTimeout = 100 * time.Millisecond
			c.OnClose = func(c *Conn) { closedConns <- c }
		}, map[int16]Handler{codeEcho: echo})
		// Before the dial: the server counts idleness from its accept,
		// which under load can come before the dial returns here.
		start := time.Now()
		nc := rawConn(t, s.Addr())
		waitClosedByServer(t, nc)
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("closed after %v, before the idle timeout", d)
		}
		c := <-closedConns
		if !errors.Is(c.Err(), ErrIdle) {
			t.Fatalf("close reason %v, want ErrIdle", c.Err())
		}
	})
}

// oversize and malformed frames close the offending connection, log why
// with the peer's address, and leave another connection working.
func TestBadFramesCloseOnlyThatConn(t *testing.T) {
	badHeader := func() []byte {
		hdr := []byte(`{"code":10,"opaque":`) // truncated JSON
		b := make([]byte, 8, 8+len(hdr))
		binary.BigEndian.PutUint32(b, uint32(4+len(hdr)))
		binary.BigEndian.PutUint32(b[4:], uint32(len(hdr)))
		return append(b, hdr...)
	}
	cases := map[string]struct {
		bytes  []byte
		reason string
	}{
		"oversize":       {binary.BigEndian.AppendUint32(nil, 4096), "frame too large"},
		"negative":       {binary.BigEndian.AppendUint32(nil, 0x80000000), "frame too short"},
		"bad header":     {badHeader(), "malformed header"},
		"bad serializer": {[]byte{0, 0, 0, 6, 7, 0, 0, 2, '{', '}'}, "unknown serialize type"},
	}
	forEachTransport(t, func(t *testing.T, tr string) {
		var logs logBuffer
		s := startServer(t, tr, func(c *ServerConfig) {
			c.MaxFrameSize = 1024
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		}, map[int16]Handler{codeEcho: echo})
		cl := newClient(t, nil)
		ctx := context.Background()
		if _, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, nil)); err != nil {
			t.Fatal(err)
		}
		for name, tc := range cases {
			nc := rawConn(t, s.Addr())
			if _, err := nc.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			waitClosedByServer(t, nc)
			testwait.For(t, testwait.Default, name+" logged", func() bool {
				l := logs.String()
				return strings.Contains(l, tc.reason) && strings.Contains(l, nc.LocalAddr().String())
			})
			resp, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte(name)))
			if err != nil || string(resp.Body) != name {
				t.Fatalf("after %s: the good connection failed: %v %v", name, resp, err)
			}
		}
	})
}

// The official client sends its last requests and closes without reading
// the answers; every frame that reached the server must still be handled.
func TestFramesBeforePeerCloseAreHandled(t *testing.T) {
	const n = 200
	for _, linger0 := range []bool{false, true} {
		forEachTransport(t, func(t *testing.T, tr string) {
			var handled atomic.Int32
			s := startServer(t, tr, nil, map[int16]Handler{
				protocol.ReqUpdateConsumerOffset: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
					handled.Add(1)
					return protocol.NewResponse(req, protocol.RespSuccess, "")
				},
			})
			var buf []byte
			for i := 0; i < n; i++ {
				buf = append(buf, mustFrame(t, protocol.NewRequest(protocol.ReqUpdateConsumerOffset,
					map[string]string{"topic": "t", "queueId": "0", "commitOffset": fmt.Sprint(i)}, nil))...)
			}
			nc := rawConn(t, s.Addr())
			if linger0 {
				nc.SetLinger(0) // close with RST
			}
			if _, err := nc.Write(buf); err != nil {
				t.Fatal(err)
			}
			nc.Close()
			testwait.For(t, testwait.Default, fmt.Sprintf("%d handlers (linger0=%v)", n, linger0), func() bool { return handled.Load() == n })
			testwait.For(t, testwait.Default, "connection dropped", func() bool { return len(s.Conns()) == 0 })
		})
	}
}

func TestCloseFailsCallsAndStopsEverything(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		entered := make(chan struct{}, 1)
		s := startServer(t, tr, nil, map[int16]Handler{
			codeHold: func(ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
				entered <- struct{}{}
				<-ctx.Done() // the connection's context ends when the server closes
				return nil
			},
		})
		cl := newClient(t, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeHold, nil, nil))
			errc <- err
		}()
		<-entered
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, ErrConnClosed) {
			t.Fatalf("call in flight when the server closed: %v", err)
		}
		if err := s.Start(); !errors.Is(err, ErrClosed) {
			t.Fatalf("Start after Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		cl.Close()
		goleak.VerifyNone(t, leakIgnores...)
	})
}

func TestNewServerValidates(t *testing.T) {
	for name, cfg := range map[string]ServerConfig{
		"transport": {Transport: "quic"},
		"frame":     {MaxFrameSize: 2},
		"pollers":   {NetpollPollers: -1},
	} {
		if _, err := NewServer(cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: NewServer = %v, want ErrBadConfig", name, err)
		}
	}
	s, err := NewServer(ServerConfig{Addr: "127.0.0.1:0", IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Transport != TransportNetpoll || s.cfg.MaxFrameSize != protocol.MaxFrameSize || s.cfg.IdleTimeout != -1 {
		t.Fatalf("defaults not applied: %+v", s.cfg)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Frames far larger than one read, in both directions, and many concurrent
// calls whose responses share write batches, each matched to its caller.
func TestLargeFramesAndManyConcurrentCalls(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		cl := newClient(t, nil)
		ctx := context.Background()

		big := make([]byte, 5<<20)
		for i := range big {
			big[i] = byte(i * 7)
		}
		resp, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, big))
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != string(big) {
			t.Fatalf("5 MiB body came back different (%d bytes)", len(resp.Body))
		}

		const n = 200
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprint(i)
				resp, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, map[string]string{"k": key}, []byte(key)))
				if err != nil {
					t.Error(err)
					return
				}
				if resp.Ext("k") != key || string(resp.Body) != key {
					t.Errorf("call %s got the answer for %s/%s", key, resp.Ext("k"), resp.Body)
				}
			}()
		}
		wg.Wait()
	})
}

// TestStopAccepting: after StopAccepting a connection already open is
// served on, and a new one is closed as it arrives.
func TestStopAccepting(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		ctx := context.Background()
		open := newClient(t, nil)
		if _, err := open.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte("before"))); err != nil {
			t.Fatal(err)
		}
		s.StopAccepting()
		resp, err := open.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte("after")))
		if err != nil || string(resp.Body) != "after" {
			t.Fatalf("an open connection after StopAccepting: %v %v", resp, err)
		}
		late := newClient(t, nil)
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if resp, err := late.Invoke(tctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte("late"))); err == nil {
			t.Fatalf("a new connection was served after StopAccepting: %v", resp)
		}
		if n := len(s.Conns()); n != 1 {
			t.Fatalf("%d connections, want the one open before", n)
		}
	})
}

// TestCodes lists the codes with a handler of their own, sorted: not the
// default handler, not one removed.
func TestCodes(t *testing.T) {
	s, err := NewServer(ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Codes(); len(got) != 0 {
		t.Fatalf("new server: %v", got)
	}
	h := func(context.Context, *Conn, *protocol.Command) *protocol.Command { return nil }
	for _, code := range []int16{310, 10, 3001, 34} {
		s.Handle(code, h)
	}
	s.HandleDefault(h)
	s.Handle(34, nil)
	if got, want := fmt.Sprint(s.Codes()), "[10 310 3001]"; got != want {
		t.Fatalf("Codes %s, want %s", got, want)
	}
}
