// Package fakeclock is the clock tests move by hand, so that nothing that
// expires (locks, brokers, clients, long polls, retention) is tested by
// sleeping. It is safe for concurrent use.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a manual clock. Its Now method fits every `now func() time.Time`
// the packages under test take.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Default returns a clock at a fixed, arbitrary instant (2023-11-14 22:13:20 UTC).
func Default() *Clock { return New(time.Unix(1_700_000_000, 0)) }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
