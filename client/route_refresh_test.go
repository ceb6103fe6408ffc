package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
)

// TestRefreshGateBackoff: a refresh that finds nothing new makes the next
// wait 50 ms, doubling to 1 s; one that finds a change, or a second of
// quiet past the wait, starts over with no wait.
func TestRefreshGateBackoff(t *testing.T) {
	clk := fakeclock.Default()
	var g refreshGate
	unproductive := func() {
		t.Helper()
		if !g.start(clk.Now()) {
			t.Fatalf("refused at a time it was due (wait %v)", g.wait(clk.Now()))
		}
		g.finish(clk.Now(), false)
	}
	if g.wait(clk.Now()) != 0 {
		t.Fatal("the first refresh must not wait")
	}
	unproductive()
	for _, want := range []time.Duration{50, 100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		if got := g.wait(clk.Now()); got != want {
			t.Fatalf("wait %v, want %v", got, want)
		}
		clk.Advance(want - time.Millisecond)
		if g.start(clk.Now()) {
			t.Fatalf("started %v before it was due", time.Millisecond)
		}
		clk.Advance(time.Millisecond)
		unproductive()
	}
	// A change found: the next one may start at once, and a later
	// unproductive one waits the least again.
	clk.Advance(time.Second)
	g.start(clk.Now())
	g.finish(clk.Now(), true)
	if got := g.wait(clk.Now()); got != 0 {
		t.Fatalf("wait %v after a change, want 0", got)
	}
	unproductive()
	if got := g.wait(clk.Now()); got != refreshMinGap {
		t.Fatalf("wait %v after a change and a miss, want %v", got, refreshMinGap)
	}
	// Back off to the cap, then stay quiet a second past the wait.
	for range 6 {
		clk.Advance(g.wait(clk.Now()))
		unproductive()
	}
	if got := g.wait(clk.Now()); got != refreshMaxGap {
		t.Fatalf("wait %v, want the cap %v", got, refreshMaxGap)
	}
	clk.Advance(refreshMaxGap + refreshMaxGap)
	unproductive()
	if got := g.wait(clk.Now()); got != refreshMinGap {
		t.Fatalf("wait %v after a quiet second, want %v", got, refreshMinGap)
	}
}

// TestRefresherCoalesces: callers that fail while a refresh of their topic
// runs share it (one fetch, one outcome); a caller when the next one is
// not due yet gets no fetch; another topic has its own.
func TestRefresherCoalesces(t *testing.T) {
	clk := fakeclock.Default()
	var wg sync.WaitGroup
	defer wg.Wait()
	release, stop := make(chan bool), make(chan struct{})
	defer close(stop) // a failed test must not leave a fetch waiting
	var fetches atomic.Int64
	r := newRefresher(context.Background(), clk.Now,
		func(fn func()) bool { wg.Add(1); go func() { defer wg.Done(); fn() }(); return true },
		func(_ context.Context, topic string) (bool, error) {
			fetches.Add(1)
			if topic != "T" {
				return false, nil
			}
			select {
			case v := <-release:
				return v, nil
			case <-stop:
				return false, nil
			}
		})
	callers := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		if tr := r.mu.topics["T"]; tr != nil && tr.run != nil {
			return tr.run.callers
		}
		return 0
	}

	const n = 8
	results := make(chan bool, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			changed, err := r.refresh(context.Background(), "T")
			if err != nil {
				t.Error(err)
			}
			results <- changed
		}()
	}
	testwait.For(t, testwait.Default, fmt.Sprintf("%d callers on one refresh", n), func() bool { return callers() == n })
	// Another topic is not held up by T's refresh.
	if _, err := r.refresh(context.Background(), "U"); err != nil {
		t.Fatal(err)
	}
	release <- false
	for range n {
		if <-results {
			t.Fatal("a caller saw a change the fetch did not report")
		}
	}
	if got := fetches.Load(); got != 2 {
		t.Fatalf("%d fetches, want 2 (one per topic)", got)
	}

	// Found nothing: the next refresh of T is not due for 50 ms.
	if changed, err := r.refresh(context.Background(), "T"); changed || err != nil || fetches.Load() != 2 {
		t.Fatalf("refresh before it was due: changed %v err %v, %d fetches", changed, err, fetches.Load())
	}
	if w := r.wait("T"); w != refreshMinGap {
		t.Fatalf("wait %v, want %v", w, refreshMinGap)
	}
	clk.Advance(refreshMinGap)
	go func() { release <- true }()
	if changed, err := r.refresh(context.Background(), "T"); !changed || err != nil || fetches.Load() != 3 {
		t.Fatalf("refresh when due: changed %v err %v, %d fetches", changed, err, fetches.Load())
	}

	// A caller whose context ends stops waiting; the refresh goes on.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := r.refresh(ctx, "T"); done <- err }()
	testwait.For(t, testwait.Default, "the refresh to start", func() bool { return callers() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	release <- false
}

// TestMasterMayHaveMoved: what makes a send or pull refresh its route.
func TestMasterMayHaveMoved(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{transportError("send", "b", "a", fmt.Errorf("remoting: connect to a: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})), true},
		{transportError("send", "b", "a", fmt.Errorf("%w: a: closed by peer", remoting.ErrConnClosed)), true},
		{transportError("send", "b", "a", &remoting.TimeoutError{Addr: "a"}), true},
		{fmt.Errorf("%w: broker-a", ErrNoBroker), true},
		{&BrokerError{Code: 14, Remark: "service not available now ... messages are put to the slave ..."}, true},
		{&BrokerError{Code: 17}, false},
		{&BrokerError{Code: 1}, false},
		{transportError("send", "b", "a", remoting.ErrClosed), false},
		{transportError("send", "b", "a", context.Canceled), false},
	} {
		if got := masterMayHaveMoved(tc.err); got != tc.want {
			t.Errorf("masterMayHaveMoved(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
