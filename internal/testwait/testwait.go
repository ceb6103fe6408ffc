// Package testwait is the one polling helper of the repository's tests: it
// waits for a condition that has no signal to wait on (network I/O, another
// process, a client's background loop) until it holds or a generous bound
// passes.
//
// The bound is a ceiling for a broken build, not a speed claim: on a loaded
// two-core machine a condition that usually holds in milliseconds may take
// seconds, so callers pick bounds far above the usual case, and a test that
// asserts on a state reached asynchronously polls for that state instead of
// sleeping.
package testwait

import (
	"testing"
	"time"
)

// Default is the bound for conditions that hold within milliseconds on an
// idle machine.
const Default = 10 * time.Second

// First and max poll intervals: the first checks come quickly so fast
// conditions cost little; the interval then grows so a slow one does not
// spin a loaded machine.
const (
	firstPoll = time.Millisecond
	maxPoll   = 20 * time.Millisecond
)

// For polls cond until it holds, failing t with what if it has not held
// after timeout.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Until(t, timeout, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// Until polls check until it returns nil, failing t with what and check's
// last error if it has not after timeout, so the failure shows the state
// the test was waiting to leave.
func Until(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	if err := Poll(timeout, check); err != nil {
		t.Fatalf("timed out after %v waiting for %s: %v", timeout, what, err)
	}
}

// Poll calls check until it returns nil or timeout passes, and returns
// check's last error (nil once it held). It is For for callers that are not
// a test's goroutine, or that fail in their own words.
func Poll(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	wait := firstPoll
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, maxPoll)
	}
}

type notYet struct{}

func (notYet) Error() string { return "condition still false" }

var errNotYet error = notYet{}
