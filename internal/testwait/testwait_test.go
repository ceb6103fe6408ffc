package testwait

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestPollReturnsOnceTheCheckHolds(t *testing.T) {
	var calls atomic.Int32
	err := Poll(time.Minute, func() error {
		if calls.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls.Load() != 3 {
		t.Fatalf("Poll = %v after %d calls, want nil after 3", err, calls.Load())
	}
}

func TestPollReturnsTheLastErrorAtTheBound(t *testing.T) {
	var calls atomic.Int32
	err := Poll(0, func() error { calls.Add(1); return errors.New("stuck at 3") })
	if err == nil || err.Error() != "stuck at 3" || calls.Load() != 1 {
		t.Fatalf("Poll = %v after %d calls, want the check's error after 1", err, calls.Load())
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.msg = format
}

func TestForFailsWithWhatAtTheBound(t *testing.T) {
	r := &recorder{TB: t}
	For(r, 0, "the moon", func() bool { return false })
	if !r.failed {
		t.Fatal("For did not fail a condition that never held")
	}
	r = &recorder{TB: t}
	For(r, time.Minute, "the sun", func() bool { return true })
	if r.failed {
		t.Fatal("For failed a condition that held")
	}
}
