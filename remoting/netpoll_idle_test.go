package remoting

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestIdleNetpollConnectionsHoldNoGoroutine: a plain netpoll connection
// is read by netpoll's callback, which returns once what came is fed, so
// 300 connections that each made one call and idle hold no goroutine (one
// parked per connection, the runtime kept every goroutine's record after
// they closed: 2.4 MiB after 5,000).
func TestIdleNetpollConnectionsHoldNoGoroutine(t *testing.T) {
	const n = 300
	s := startServer(t, "netpoll", nil, map[int16]Handler{codeEcho: echo})
	before := runtime.NumGoroutine()
	for i := range n {
		nc := rawConn(t, s.Addr())
		if _, err := nc.Write(mustFrame(t, protocol.NewRequest(codeEcho, nil, []byte(fmt.Sprint(i))))); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := readFrame(t, nc)
		if err != nil || string(resp.Body) != fmt.Sprint(i) {
			t.Fatalf("call %d: %v %v", i, resp, err)
		}
	}
	if got := len(s.Conns()); got != n {
		t.Fatalf("%d connections served, want %d", got, n)
	}
	// Handlers run on pooled workers that stay parked (up to 64), and
	// netpoll's callbacks end just after they answered.
	testwait.For(t, testwait.Default, "goroutines back near where they were", func() bool {
		return runtime.NumGoroutine()-before < n/4
	})
}

// TestNetpollFrameInPiecesWithPauses: with the callback reader, a frame
// that comes in pieces with pauses between them (the length, the header
// word, the header, the body, as the official client writes them) is
// handled, and so is a frame whose first bytes come with the end of the
// one before. (Whether a callback waits out a half-read frame or returns
// and is called again is not seen here: both answer; waiting saves a
// callback per piece.)
func TestNetpollFrameInPiecesWithPauses(t *testing.T) {
	s := startServer(t, "netpoll", nil, map[int16]Handler{codeEcho: echo})
	nc := rawConn(t, s.Addr())
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f1 := mustFrame(t, protocol.NewRequest(codeEcho, map[string]string{"k": "one"}, []byte("first")))
	f2 := mustFrame(t, protocol.NewRequest(codeEcho, map[string]string{"k": "two"}, []byte("second")))
	pieces := [][]byte{f1[:4], f1[4:8], f1[8 : len(f1)-3], append(f1[len(f1)-3:len(f1):len(f1)], f2[:6]...), f2[6:]}
	for _, p := range pieces {
		if _, err := nc.Write(p); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"first", "second"} {
		resp, err := readFrame(t, nc)
		if err != nil || string(resp.Body) != want {
			t.Fatalf("want %q answered: %v %v", want, resp, err)
		}
	}
}
