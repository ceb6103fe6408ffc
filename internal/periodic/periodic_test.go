package periodic

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Run calls fn again and again until stop is closed, and then returns (the
// leak check sees its goroutine gone).
func TestRunUntilStopped(t *testing.T) {
	stop := make(chan struct{})
	var calls atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(stop, time.Millisecond, func() { calls.Add(1) })
	}()
	testwait.For(t, testwait.Default, "three calls", func() bool { return calls.Load() >= 3 })
	close(stop)
	select {
	case <-done:
	case <-time.After(testwait.Default):
		t.Fatal("Run did not return once stop was closed")
	}
}

// RunKicked calls fn on a kick without waiting for the interval, and
// returns once stop is closed.
func TestRunKicked(t *testing.T) {
	stop, kick := make(chan struct{}), make(chan struct{}, 1)
	calls := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunKicked(stop, kick, time.Hour, func() { calls <- struct{}{} })
	}()
	for range 2 {
		kick <- struct{}{}
		select {
		case <-calls:
		case <-time.After(testwait.Default):
			t.Fatal("a kick made no call")
		}
	}
	close(stop)
	select {
	case <-done:
	case <-time.After(testwait.Default):
		t.Fatal("RunKicked did not return once stop was closed")
	}
}
