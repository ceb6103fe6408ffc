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
type dueIndex = minHeap[item]

func (a item) less(b item) bool {
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

// offset is a lane's offset in a pending heap, lowest first.
type offset int64

func (a offset) less(b offset) bool { return a < b }

// minHeap is a container/heap over a slice, least first by T's less:
// the due-time index and each lane's pending offsets.
type minHeap[T interface{ less(T) bool }] []T

func (h minHeap[T]) Len() int           { return len(h) }
func (h minHeap[T]) Less(i, j int) bool { return h[i].less(h[j]) }
func (h minHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap[T]) Push(x any)        { *h = append(*h, x.(T)) }
func (h *minHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *minHeap[T]) add(x T) { heap.Push(h, x) }
func (h *minHeap[T]) pop() T  { return heap.Pop(h).(T) }

// peek returns the least element; ok is false when there is none.
func (h minHeap[T]) peek() (T, bool) {
	if len(h) == 0 {
		var zero T
		return zero, false
	}
	return h[0], true
}

// pending tracks a lane's indexed offsets not yet fired, so that its
// progress is the lowest of them (every offset below is done) whatever
// order they fire in.
type pending struct {
	offs minHeap[offset]
	// gone are fired offsets still in offs, removed lazily by low.
	gone map[int64]struct{}
}

func (p *pending) add(off int64) { p.offs.add(offset(off)) }

func (p *pending) fired(off int64) {
	if p.gone == nil {
		p.gone = make(map[int64]struct{})
	}
	p.gone[off] = struct{}{}
}

// low returns the lowest offset still pending, or next when none is.
func (p *pending) low(next int64) int64 {
	for o, ok := p.offs.peek(); ok; o, ok = p.offs.peek() {
		if _, fired := p.gone[int64(o)]; !fired {
			return int64(o)
		}
		delete(p.gone, int64(o))
		p.offs.pop()
	}
	return next
}
