package processqueue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Stats is a consistent snapshot of a process queue's accounting and state,
// the input of Decide.
type Stats struct {
	// Count and SizeBytes cover held and consuming messages.
	Count     int64
	SizeBytes int64
	// MinOffset and MaxOffset are the lowest and highest held offsets, and
	// Span their difference; all three are 0 when nothing is held.
	MinOffset, MaxOffset, Span int64
	// Dropped, Locked mirror the flags (Locked is the flag, not its expiry).
	Dropped bool
	Locked  bool
	// LastPull, LastConsume and LastLock are the last recorded times.
	LastPull, LastConsume, LastLock time.Time
}

// Stats returns a snapshot.
func (pq *ProcessQueue[M]) Stats() Stats {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	s := Stats{
		Count:       pq.mu.count,
		SizeBytes:   pq.mu.size,
		Dropped:     pq.dropped.Load(),
		Locked:      pq.mu.locked,
		LastPull:    pq.mu.lastPull,
		LastConsume: pq.mu.lastConsume,
		LastLock:    pq.mu.lastLock,
	}
	if n := len(pq.mu.held); n > 0 {
		s.MinOffset = pq.mu.held[0].QueueOffset()
		s.MaxOffset = pq.mu.held[n-1].QueueOffset()
		s.Span = s.MaxOffset - s.MinOffset
	}
	return s
}

// Drop marks the queue as no longer assigned to this consumer: pulls stop
// and consumed offsets are no longer committed. Dropping is final.
func (pq *ProcessQueue[M]) Drop() { pq.dropped.Store(true) }

// Dropped reports whether Drop was called.
func (pq *ProcessQueue[M]) Dropped() bool { return pq.dropped.Load() }

// MarkPulled records a pull at the current time.
func (pq *ProcessQueue[M]) MarkPulled() {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.mu.lastPull = pq.cfg.Now()
}

// PullExpired reports whether no pull was recorded for longer than
// Config.PullMaxIdle; rebalance then drops and re-creates the queue.
func (pq *ProcessQueue[M]) PullExpired() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.cfg.Now().Sub(pq.mu.lastPull) > pq.cfg.PullMaxIdle
}

// MarkLocked records that the broker granted or renewed the lock now.
func (pq *ProcessQueue[M]) MarkLocked() {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.mu.locked = true
	pq.mu.lastLock = pq.cfg.Now()
}

// MarkUnlocked records that the lock is not (or no longer) held.
func (pq *ProcessQueue[M]) MarkUnlocked() {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.mu.locked = false
}

// Locked reports the lock flag, whatever its age.
func (pq *ProcessQueue[M]) Locked() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.mu.locked
}

// LockExpired reports whether the lock was last obtained longer than
// Config.LockMaxLive ago, so it can no longer be trusted.
func (pq *ProcessQueue[M]) LockExpired() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.cfg.Now().Sub(pq.mu.lastLock) > pq.cfg.LockMaxLive
}

// LockValid reports whether orderly consumption may proceed: locked and not
// expired.
func (pq *ProcessQueue[M]) LockValid() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.mu.locked && pq.cfg.Now().Sub(pq.mu.lastLock) <= pq.cfg.LockMaxLive
}

// IncTryUnlockTimes counts a deferred unlock (the queue was busy consuming)
// and returns the new count.
func (pq *ProcessQueue[M]) IncTryUnlockTimes() int64 { return pq.tryUnlockTimes.Add(1) }

// TryUnlockTimes returns the number of deferred unlocks.
func (pq *ProcessQueue[M]) TryUnlockTimes() int64 { return pq.tryUnlockTimes.Load() }

// AcquireConsume takes the queue's consume token, held while an orderly
// batch is being consumed; rebalance acquires it (with a deadline) before
// unlocking the queue at the broker, so no batch is in flight when another
// client gets the lock. It returns ctx's error if ctx ends first.
func (pq *ProcessQueue[M]) AcquireConsume(ctx context.Context) error {
	select {
	case pq.consumeToken <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("processqueue: waiting for the consume token: %w", ctx.Err())
	}
}

// TryAcquireConsume takes the consume token if it is free.
func (pq *ProcessQueue[M]) TryAcquireConsume() bool {
	select {
	case pq.consumeToken <- struct{}{}:
		return true
	default:
		return false
	}
}

// ErrNotAcquired means ReleaseConsume was called while the consume token was
// free: a release without a matching acquire.
var ErrNotAcquired = errors.New("processqueue: consume token released but not held")

// ReleaseConsume returns the consume token.
func (pq *ProcessQueue[M]) ReleaseConsume() error {
	select {
	case <-pq.consumeToken:
		return nil
	default:
		return ErrNotAcquired
	}
}
