package due

import "container/heap"

// item is one indexed entry and the index of its source in the Service,
// laid out flat in 24 bytes (an Entry with a source beside it would take
// 32): the index holds one per waiting timer.
type item struct {
	due, off int64
	lane     int32
	src      uint16
	check    bool
}

func itemOf(e Entry, src int) item {
	return item{due: e.Due, off: e.Off, lane: e.Lane, src: uint16(src), check: e.Check}
}

func (it item) entry() Entry { return Entry{Due: it.due, Off: it.off, Lane: it.lane, Check: it.check} }

// dueIndex is the one due-time index: every waiting entry of every
// source, earliest first (ties in source, lane and offset order, so a
// lane's entries due at once go out in offset order).
type dueIndex []item

func (h dueIndex) Len() int { return len(h) }
func (h dueIndex) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	switch {
	case a.due != b.due:
		return a.due < b.due
	case a.src != b.src:
		return a.src < b.src
	case a.lane != b.lane:
		return a.lane < b.lane
	}
	return a.off < b.off
}
func (h dueIndex) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueIndex) Push(x any)   { *h = append(*h, x.(item)) }
func (h *dueIndex) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *dueIndex) add(it item) { heap.Push(h, it) }
func (h *dueIndex) pop() item   { return heap.Pop(h).(item) }

// peek returns the earliest entry; ok is false when none waits.
func (h dueIndex) peek() (item, bool) {
	if len(h) == 0 {
		return item{}, false
	}
	return h[0], true
}

// offHeap holds offsets, lowest first.
type offHeap []int64

func (h offHeap) Len() int           { return len(h) }
func (h offHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h offHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *offHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *offHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pending tracks a lane's indexed offsets not yet fired, so that its
// progress is the lowest of them (every offset below is done) whatever
// order they fire in.
type pending struct {
	offs offHeap
	// gone are fired offsets still in offs, removed lazily by low.
	gone map[int64]struct{}
}

func (p *pending) add(off int64) { heap.Push(&p.offs, off) }

func (p *pending) fired(off int64) {
	if p.gone == nil {
		p.gone = make(map[int64]struct{})
	}
	p.gone[off] = struct{}{}
}

// low returns the lowest offset still pending, or next when none is.
func (p *pending) low(next int64) int64 {
	for len(p.offs) > 0 {
		o := p.offs[0]
		if _, ok := p.gone[o]; !ok {
			return o
		}
		delete(p.gone, o)
		heap.Pop(&p.offs)
	}
	return next
}
