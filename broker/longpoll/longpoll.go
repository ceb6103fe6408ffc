// Package longpoll owns the broker's parked pull requests (RocketMQ's
// PullRequestHoldService): a pull that found no new message waits here until
// a message arrives on its queue or its suspend timeout passes.
//
// Invariants:
//   - a parked request is woken exactly once, either by an arrival at or
//     beyond its offset (expired=false) or by its deadline or Close
//     (expired=true);
//   - no arrival is missed between a pull finding nothing and the request
//     being parked: Park compares the request's offset with the newest
//     offset already announced for its queue and refuses to park a request
//     that is already satisfied;
//   - a parked request costs one small struct and one heap slot, not a
//     goroutine; one timer goroutine serves every deadline.
//
// Wake callbacks run outside the table's lock, on the goroutine that
// called Notify, ExpireDue or Close; they must not block for long.
package longpoll

import (
	"container/heap"
	"sync"
	"time"
)

// Key names one message queue.
type Key struct {
	Topic   string
	QueueID int32
}

// Request is one parked pull.
type Request struct {
	Key Key
	// Offset is the queue offset the pull asked for; an arrival whose new max
	// offset is greater wakes the request.
	Offset int64
	// Deadline is when the request is answered with "no new message".
	Deadline time.Time
	// Wake answers the request. expired is true when the deadline passed or
	// the table closed.
	Wake func(expired bool)
	// Wakes, when not 0, is WakeCount(Key) as the requester read it before
	// it looked for messages: Park refuses the request if the key was
	// woken since (WakeKey), so a wake between the look and the park is
	// not missed.
	Wakes uint64

	heapIndex int
}

// Table holds parked requests. Create it with New; Start runs its timer.
type Table struct {
	now func() time.Time

	mu struct {
		sync.Mutex
		byKey   map[Key][]*Request
		maxSeen map[Key]int64
		// wakes counts each key's WakeKey calls.
		wakes  map[Key]uint64
		byTime deadlineHeap
		closed bool
	}

	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns an empty table; now defaults to time.Now.
func New(now func() time.Time) *Table {
	if now == nil {
		now = time.Now
	}
	t := &Table{now: now, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	t.mu.byKey = make(map[Key][]*Request)
	t.mu.maxSeen = make(map[Key]int64)
	t.mu.wakes = make(map[Key]uint64)
	return t
}

// Park holds r until it can be answered. It returns false, holding nothing,
// when an arrival already announced for r.Key is beyond r.Offset or the
// table is closed: the caller should run the pull again now.
func (t *Table) Park(r *Request) bool {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return false
	}
	if max, ok := t.mu.maxSeen[r.Key]; ok && max > r.Offset {
		t.mu.Unlock()
		return false
	}
	if r.Wakes != 0 && t.mu.wakes[r.Key]+1 > r.Wakes {
		t.mu.Unlock()
		return false
	}
	t.mu.byKey[r.Key] = append(t.mu.byKey[r.Key], r)
	heap.Push(&t.mu.byTime, r)
	earliest := t.mu.byTime[0] == r
	t.mu.Unlock()
	if earliest {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// Notify announces that queue k now holds messages below maxOffset, and
// wakes every request parked on k at an offset below it.
func (t *Table) Notify(k Key, maxOffset int64) {
	t.mu.Lock()
	if prev, ok := t.mu.maxSeen[k]; !ok || maxOffset > prev {
		t.mu.maxSeen[k] = maxOffset
	}
	waiting := t.mu.byKey[k]
	var woken []*Request
	kept := waiting[:0]
	for _, r := range waiting {
		if r.Offset < maxOffset {
			woken = append(woken, r)
			heap.Remove(&t.mu.byTime, r.heapIndex)
		} else {
			kept = append(kept, r)
		}
	}
	clear(waiting[len(kept):])
	if len(kept) == 0 {
		delete(t.mu.byKey, k)
	} else {
		t.mu.byKey[k] = kept
	}
	t.mu.Unlock()
	for _, r := range woken {
		r.Wake(false)
	}
}

// WakeKey wakes every request parked on k, whatever its offset, without
// announcing an arrival: a change that may let them find messages
// although none arrived (a FIFO queue unblocked by an acknowledgement,
// messages a pop left for others).
func (t *Table) WakeKey(k Key) {
	t.mu.Lock()
	t.mu.wakes[k]++
	woken := t.mu.byKey[k]
	delete(t.mu.byKey, k)
	for _, r := range woken {
		heap.Remove(&t.mu.byTime, r.heapIndex)
	}
	t.mu.Unlock()
	for _, r := range woken {
		r.Wake(false)
	}
}

// WakeCount is what a requester that may be woken by WakeKey reads
// before it looks for messages, and parks with (Request.Wakes): never 0.
func (t *Table) WakeCount(k Key) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.wakes[k] + 1
}

// Cancel takes r out of the table without waking it, and reports
// whether it was parked: a request parked on several queues, once woken
// by one, is cancelled on the others.
func (t *Table) Cancel(r *Request) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := r.heapIndex
	if i < 0 || i >= len(t.mu.byTime) || t.mu.byTime[i] != r {
		return false
	}
	heap.Remove(&t.mu.byTime, i)
	t.removeFromKeyLocked(r)
	return true
}

// Forget drops what the table remembers of queue k (its newest announced
// offset), for a deleted topic.
func (t *Table) Forget(k Key) {
	t.mu.Lock()
	delete(t.mu.maxSeen, k)
	delete(t.mu.wakes, k)
	t.mu.Unlock()
}

// ExpireDue wakes, as expired, every request whose deadline is at or before
// now, and returns the next deadline (zero when none is parked).
func (t *Table) ExpireDue(now time.Time) time.Time {
	t.mu.Lock()
	var due []*Request
	for len(t.mu.byTime) > 0 && !t.mu.byTime[0].Deadline.After(now) {
		r := heap.Pop(&t.mu.byTime).(*Request)
		t.removeFromKeyLocked(r)
		due = append(due, r)
	}
	var next time.Time
	if len(t.mu.byTime) > 0 {
		next = t.mu.byTime[0].Deadline
	}
	t.mu.Unlock()
	for _, r := range due {
		r.Wake(true)
	}
	return next
}

// Len returns the number of parked requests.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.byTime)
}

func (t *Table) removeFromKeyLocked(r *Request) {
	list := t.mu.byKey[r.Key]
	for i, x := range list {
		if x == r {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			break
		}
	}
	if len(list) == 0 {
		delete(t.mu.byKey, r.Key)
	} else {
		t.mu.byKey[r.Key] = list
	}
}

// Start runs the timer goroutine that expires requests; Close stops it.
func (t *Table) Start() {
	t.wg.Add(1)
	go t.run()
}

func (t *Table) run() {
	defer t.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := t.ExpireDue(t.now())
		wait := time.Hour
		if !next.IsZero() {
			wait = next.Sub(t.now())
			if wait < time.Millisecond {
				wait = time.Millisecond
			}
		}
		timer.Reset(wait)
		select {
		case <-t.stop:
			return
		case <-t.kick:
		case <-timer.C:
		}
	}
}

// WakeAll answers every parked request now, as expired, and goes on
// taking new ones: a node that stopped being master sends its held pulls
// back to their consumers.
func (t *Table) WakeAll() {
	t.mu.Lock()
	all := []*Request(t.mu.byTime)
	t.mu.byTime = nil
	t.mu.byKey = make(map[Key][]*Request)
	t.mu.Unlock()
	for _, r := range all {
		r.Wake(true)
	}
}

// Close stops the timer and answers every parked request as expired. Later
// Park calls return false.
func (t *Table) Close() {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return
	}
	t.mu.closed = true
	all := []*Request(t.mu.byTime)
	t.mu.byTime = nil
	t.mu.byKey = make(map[Key][]*Request)
	t.mu.Unlock()
	close(t.stop)
	t.wg.Wait()
	for _, r := range all {
		r.Wake(true)
	}
}

// deadlineHeap orders requests by deadline; each request knows its index so
// an arrival can remove it in O(log n).
type deadlineHeap []*Request

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].Deadline.Before(h[j].Deadline) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}
func (h *deadlineHeap) Push(x any) {
	r := x.(*Request)
	r.heapIndex = len(*h)
	*h = append(*h, r)
}
func (h *deadlineHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.heapIndex = -1
	return r
}
