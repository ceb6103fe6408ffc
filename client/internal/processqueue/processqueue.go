package processqueue

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Message is what a process queue holds. The client's message type
// implements it; the queue never looks inside.
type Message interface {
	// QueueOffset is the message's offset in its queue; it orders and
	// identifies messages within one process queue.
	QueueOffset() int64
	// BodySize is the size in bytes counted against the size threshold
	// (the body length, as in Java).
	BodySize() int
}

// Config holds a process queue's timing. The zero value is not usable; start
// from DefaultConfig.
type Config struct {
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// PullMaxIdle is how long a queue may go without a pull before
	// PullExpired reports it (Java rocketmq.client.pull.pullMaxIdleTime).
	// Default: 120 s.
	PullMaxIdle time.Duration
	// LockMaxLive is how long a broker lock is trusted after it was last
	// obtained or renewed (Java rocketmq.client.rebalance.lockMaxLiveTime).
	// The broker expires locks after 60 s and clients renew every 20 s.
	// Default: 30 s.
	LockMaxLive time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Now: time.Now, PullMaxIdle: 120 * time.Second, LockMaxLive: 30 * time.Second}
}

// ProcessQueue buffers one message queue's pulled messages. All methods are
// safe for concurrent use.
type ProcessQueue[M Message] struct {
	cfg Config

	dropped        atomic.Bool
	tryUnlockTimes atomic.Int64
	// consumeToken is held by whoever consumes an orderly queue, so that
	// rebalance can wait for the current batch before unlocking the queue
	// at the broker.
	consumeToken chan struct{}

	mu struct {
		sync.Mutex
		held        []M // sorted by offset
		consuming   []M // orderly: taken, not committed; sorted by offset
		count       int64
		size        int64
		maxOffset   int64 // highest offset ever put; 0 initially, as in Java
		dispatching bool  // a consume task is scheduled (orderly)
		lastPull    time.Time
		lastConsume time.Time
		lastLock    time.Time
		locked      bool
	}
}

// New returns an empty process queue. Zero fields of cfg take their defaults.
func New[M Message](cfg Config) *ProcessQueue[M] {
	def := DefaultConfig()
	if cfg.Now == nil {
		cfg.Now = def.Now
	}
	if cfg.PullMaxIdle <= 0 {
		cfg.PullMaxIdle = def.PullMaxIdle
	}
	if cfg.LockMaxLive <= 0 {
		cfg.LockMaxLive = def.LockMaxLive
	}
	pq := &ProcessQueue[M]{cfg: cfg, consumeToken: make(chan struct{}, 1)}
	now := cfg.Now()
	pq.mu.lastPull, pq.mu.lastConsume, pq.mu.lastLock = now, now, now
	return pq
}

// search returns where offset is or would be in s.
func search[M Message](s []M, offset int64) (int, bool) {
	return slices.BinarySearchFunc(s, offset, func(m M, o int64) int {
		switch a := m.QueueOffset(); {
		case a < o:
			return -1
		case a > o:
			return 1
		}
		return 0
	})
}

// insert adds m to sorted s unless its offset is there already. Pulled
// batches arrive in offset order, so the common case is an append.
func insert[M Message](s []M, m M) ([]M, bool) {
	off := m.QueueOffset()
	if n := len(s); n == 0 || s[n-1].QueueOffset() < off {
		return append(s, m), true
	}
	i, found := search(s, off)
	if found {
		return s, false
	}
	return slices.Insert(s, i, m), true
}

// Put adds pulled messages. A message whose offset is already held (or being
// consumed) is ignored and not counted again. It reports whether the caller
// should dispatch a consume task: true when the queue holds messages and no
// task was marked as running, which it now is until Take finds the queue
// empty (orderly consumption relies on this to run one task per queue).
func (pq *ProcessQueue[M]) Put(msgs []M) (dispatch bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, m := range msgs {
		off := m.QueueOffset()
		if _, busy := search(pq.mu.consuming, off); busy {
			continue
		}
		var added bool
		if pq.mu.held, added = insert(pq.mu.held, m); !added {
			continue
		}
		pq.mu.count++
		pq.mu.size += int64(m.BodySize())
		// Java records the last new offset; the maximum is the same for
		// in-order pulls and stays right if a batch ever arrives out of
		// order.
		pq.mu.maxOffset = max(pq.mu.maxOffset, off)
	}
	if len(pq.mu.held) > 0 && !pq.mu.dispatching {
		pq.mu.dispatching = true
		return true
	}
	return false
}

// Remove drops consumed messages (concurrent consumption) and returns the
// offset to commit: the smallest offset still held, or one past the highest
// offset ever put when nothing is held. It returns -1, meaning "commit
// nothing", when the queue held nothing to begin with (for instance after
// Clear), exactly as Java's removeMessage.
func (pq *ProcessQueue[M]) Remove(msgs []M) int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.mu.lastConsume = pq.cfg.Now()
	if len(pq.mu.held) == 0 {
		return -1
	}
	for _, m := range msgs {
		i, found := search(pq.mu.held, m.QueueOffset())
		if !found {
			continue
		}
		pq.mu.count--
		pq.mu.size -= int64(pq.mu.held[i].BodySize())
		pq.mu.held = slices.Delete(pq.mu.held, i, i+1)
	}
	if len(pq.mu.held) > 0 {
		return pq.mu.held[0].QueueOffset()
	}
	return pq.mu.maxOffset + 1
}

// Take moves up to batch of the lowest-offset messages into the consuming
// set and returns them (orderly consumption). An empty result clears the
// dispatch mark, so the next Put dispatches again.
func (pq *ProcessQueue[M]) Take(batch int) []M {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.mu.lastConsume = pq.cfg.Now()
	n := min(max(batch, 0), len(pq.mu.held))
	out := slices.Clone(pq.mu.held[:n])
	pq.mu.held = slices.Delete(pq.mu.held, 0, n)
	for _, m := range out {
		pq.mu.consuming, _ = insert(pq.mu.consuming, m)
	}
	if len(out) == 0 {
		pq.mu.dispatching = false
	}
	return out
}

// Commit forgets the consuming set and returns the offset to commit, one
// past its highest offset, or -1 if nothing was being consumed.
func (pq *ProcessQueue[M]) Commit() int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	n := len(pq.mu.consuming)
	if n == 0 {
		return -1
	}
	next := pq.mu.consuming[n-1].QueueOffset() + 1
	for _, m := range pq.mu.consuming {
		pq.mu.size -= int64(m.BodySize())
	}
	pq.mu.count -= int64(n)
	pq.mu.consuming = pq.mu.consuming[:0]
	return next
}

// ConsumeAgain returns msgs from the consuming set to the buffer, so the
// next Take delivers them again (orderly consumption after a failure).
func (pq *ProcessQueue[M]) ConsumeAgain(msgs []M) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, m := range msgs {
		i, found := search(pq.mu.consuming, m.QueueOffset())
		if !found {
			continue // not ours to return; it is not counted
		}
		pq.mu.held, _ = insert(pq.mu.held, pq.mu.consuming[i])
		pq.mu.consuming = slices.Delete(pq.mu.consuming, i, i+1)
	}
}

// Rollback returns the whole consuming set to the buffer.
func (pq *ProcessQueue[M]) Rollback() {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for _, m := range pq.mu.consuming {
		pq.mu.held, _ = insert(pq.mu.held, m)
	}
	pq.mu.consuming = pq.mu.consuming[:0]
}

// Clear drops every message and resets the accounting (after an offset
// reset). The highest offset goes back to 0, as in Java.
func (pq *ProcessQueue[M]) Clear() {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	pq.mu.held, pq.mu.consuming = nil, nil
	pq.mu.count, pq.mu.size, pq.mu.maxOffset = 0, 0, 0
}

// Contains reports whether a message with this offset is held (not counting
// the consuming set).
func (pq *ProcessQueue[M]) Contains(offset int64) bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	_, found := search(pq.mu.held, offset)
	return found
}

// HasHeld reports whether any message is held (not counting the consuming
// set); Java's hasTempMessage.
func (pq *ProcessQueue[M]) HasHeld() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return len(pq.mu.held) > 0
}
