// Package periodic runs a piece of background work at a fixed interval
// until its owner stops it: the one ticker loop of the name server, the
// store, the transport, the ACL file watcher, the broker and the client.
package periodic

import "time"

// Run calls fn every interval until stop is closed; it returns then. A
// call of fn that outlasts the interval delays the next (ticks are
// dropped, not queued).
func Run(stop <-chan struct{}, interval time.Duration, fn func()) {
	RunKicked(stop, nil, interval, fn)
}

// RunKicked is Run that also calls fn each time kick receives: work that
// is due on a clock and also when something happens (the owner sends on
// kick without blocking, so kicks during a call of fn make one more).
func RunKicked(stop, kick <-chan struct{}, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-kick:
		case <-t.C:
		}
		fn()
	}
}
