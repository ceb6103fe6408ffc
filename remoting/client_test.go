package remoting

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testnet"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// silent handles requests by never answering.
func silent(_ context.Context, _ *Conn, _ *protocol.Command) *protocol.Command { return nil }

func pendingCalls(c *Conn) int {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return len(c.pmu.calls)
}

// connWithoutPending returns cl's connection to addr, failing t if a call
// still waits on it for an answer: a call that ended took its entry with
// it.
func connWithoutPending(t *testing.T, cl *Client, addr string) *Conn {
	t.Helper()
	c, err := cl.Conn(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	if n := pendingCalls(c); n != 0 {
		t.Fatalf("%d calls left in the pending table", n)
	}
	return c
}

// invokeAsync sends req with InvokeAsync and returns where its answer
// arrives; a failed call fails t (and sends nil).
func invokeAsync(t *testing.T, cl *Client, addr string, req *protocol.Command) <-chan *protocol.Command {
	t.Helper()
	done := make(chan *protocol.Command, 1)
	if err := cl.InvokeAsync(context.Background(), addr, req, func(r *protocol.Command, err error) {
		if err != nil {
			t.Error(err)
		}
		done <- r
	}); err != nil {
		t.Fatal(err)
	}
	return done
}

func TestCallTimeoutAndCancel(t *testing.T) {
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{codeHold: silent, protocol.ReqGetRouteInfoByTopic: silent})
	cl := newClient(t, func(c *ClientConfig) { c.CallTimeout = 50 * time.Millisecond })
	req := protocol.NewRequest(codeHold, nil, nil)

	// No deadline on ctx: the configured call timeout applies.
	_, err := cl.Invoke(context.Background(), s.Addr(), req)
	if want := "remoting: no answer from " + s.Addr() + " within 50ms (request CODE_1002)"; err == nil || err.Error() != want {
		t.Fatalf("call timeout: %v, want %q", err, want)
	}
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call timeout %v does not match ErrTimeout and context.DeadlineExceeded", err)
	}
	route := protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, nil, nil)
	if _, err := cl.Invoke(context.Background(), s.Addr(), route); err == nil || !strings.HasSuffix(err.Error(), "within 50ms (request GET_ROUTEINFO_BY_TOPIC)") {
		t.Fatalf("call timeout names the request as %v", err)
	}
	// ctx deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_, err = cl.Invoke(ctx, s.Addr(), req)
	cancel()
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx deadline: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "context deadline exceeded") || !strings.HasPrefix(msg, "remoting: no answer from "+s.Addr()+" within ") {
		t.Fatalf("ctx deadline error reads %q", msg)
	}
	// Cancellation.
	ctx, cancel = context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cl.Invoke(ctx, s.Addr(), req)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// Async call timing out.
	done := make(chan error, 1)
	if err := cl.InvokeAsync(context.Background(), s.Addr(), req, func(_ *protocol.Command, err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrTimeout) {
		t.Fatalf("async timeout: %v", err)
	}
	c := connWithoutPending(t, cl, s.Addr())
	// The connection is still usable after timeouts.
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

func TestPendingCallsFailWhenConnDrops(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		arrived := make(chan *Conn, 3)
		s := startServer(t, tr, nil, map[int16]Handler{
			codeHold: func(_ context.Context, c *Conn, _ *protocol.Command) *protocol.Command {
				arrived <- c
				return nil
			},
		})
		cl := newClient(t, nil)
		errc := make(chan error, 3)
		asyncErr := make(chan error, 1)
		for i := 0; i < 2; i++ {
			go func() {
				_, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeHold, nil, nil))
				errc <- err
			}()
		}
		sc := <-arrived
		<-arrived
		if err := cl.InvokeAsync(context.Background(), s.Addr(), protocol.NewRequest(codeHold, nil, nil), func(_ *protocol.Command, err error) { asyncErr <- err }); err != nil {
			t.Fatal(err)
		}
		<-arrived
		sc.Close() // the server drops the connection
		for i := 0; i < 2; i++ {
			if err := <-errc; !errors.Is(err, ErrConnClosed) {
				t.Fatalf("pending call: %v", err)
			}
		}
		if err := <-asyncErr; !errors.Is(err, ErrConnClosed) {
			t.Fatalf("pending async call: %v", err)
		}
	})
}

func TestClientReconnectsAfterServerRestart(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		var closes atomic.Int32
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		addr := s.Addr()
		cl := newClient(t, func(c *ClientConfig) { c.OnClose = func(string) { closes.Add(1) } })
		ctx := context.Background()
		if _, err := cl.Invoke(ctx, addr, protocol.NewRequest(codeEcho, nil, nil)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		testwait.For(t, testwait.Default, "client sees the close", func() bool { return closes.Load() == 1 })
		if _, err := cl.Invoke(ctx, addr, protocol.NewRequest(codeEcho, nil, nil)); err == nil {
			t.Fatal("call succeeded with the server down")
		} else if want := addr; !contains(err.Error(), want) {
			t.Fatalf("error %q does not name %s", err, want)
		}

		s2 := startServer(t, tr, func(c *ServerConfig) { c.Addr = addr }, map[int16]Handler{codeEcho: echo})
		resp, err := cl.Invoke(ctx, s2.Addr(), protocol.NewRequest(codeEcho, nil, []byte("again")))
		if err != nil || string(resp.Body) != "again" {
			t.Fatalf("after restart: %v %v", resp, err)
		}
	})
}

func TestClientCloseFailsCallsInFlight(t *testing.T) {
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{codeHold: silent})
	cl := NewClient(ClientConfig{Logger: quietLogger()})
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		c, err := cl.Conn(context.Background(), s.Addr())
		if err != nil {
			errc <- err
			return
		}
		close(started)
		_, err = c.Invoke(context.Background(), protocol.NewRequest(codeHold, nil, nil))
		errc <- err
	}()
	<-started
	testwait.For(t, testwait.Default, "call registered", func() bool {
		c, _ := cl.Conn(context.Background(), s.Addr())
		return c != nil && pendingCalls(c) == 1
	})
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrConnClosed) || !errors.Is(err, ErrClosed) {
		t.Fatalf("call in flight at Close: %v", err)
	}
	if _, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeHold, nil, nil)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Invoke after Close: %v", err)
	}
}

func TestClientDialError(t *testing.T) {
	addr := testnet.DeadAddr(t)
	cl := newClient(t, nil)
	_, err := cl.Invoke(context.Background(), addr, protocol.NewRequest(codeEcho, nil, nil))
	if err == nil || !contains(err.Error(), addr) {
		t.Fatalf("dial error %v should name %s", err, addr)
	}
}

// A request is sent as a copy with a fresh opaque, so one Command can be
// sent concurrently.
func TestInvokeDoesNotModifyRequest(t *testing.T) {
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{codeEcho: echo})
	cl := newClient(t, nil)
	req := protocol.NewRequest(codeEcho, map[string]string{"k": "x"}, nil)
	req.Opaque = 7
	errc := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			_, err := cl.Invoke(context.Background(), s.Addr(), req)
			errc <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if req.Opaque != 7 || req.Flag != 0 {
		t.Fatalf("request modified: %v", req)
	}
}

func TestFrameSplitterByteByByte(t *testing.T) {
	var stream []byte
	for i := 0; i < 3; i++ {
		stream = append(stream, mustFrame(t, protocol.NewRequest(int16(i), map[string]string{"i": "x"}, make([]byte, 5000*i)))...)
	}
	var got []*protocol.Command
	s := frameSplitter{max: protocol.MaxFrameSize}
	for i := range stream {
		if err := s.split(stream[i:i+1], func(f []byte) error {
			c, err := protocol.DecodeFrame(f)
			got = append(got, c)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 || got[2].Code != 2 || len(got[2].Body) != 10000 {
		t.Fatalf("split into %v", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
