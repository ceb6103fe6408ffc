package timer

import "container/heap"

// item is one waiting timer: its due time and timer-queue offset. check
// marks a timer that may have been delivered before a restart.
type item struct {
	due, off int64
	check    bool
}

// dueHeap orders waiting timers by (due, offset).
type dueHeap []item

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	return h[i].due < h[j].due || (h[i].due == h[j].due && h[i].off < h[j].off)
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offHeap holds the offsets of waiting timers, lowest first; delivered
// ones are removed lazily (see watermark).
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

// waiting is the in-memory index of the timers not yet delivered.
type waiting struct {
	byDue dueHeap
	byOff offHeap
	// gone are delivered offsets still in byOff.
	gone map[int64]struct{}
}

func (w *waiting) add(it item) {
	heap.Push(&w.byDue, it)
	heap.Push(&w.byOff, it.off)
}

func (w *waiting) len() int { return len(w.byDue) }

// peek returns the earliest timer; ok is false when none waits.
func (w *waiting) peek() (item, bool) {
	if len(w.byDue) == 0 {
		return item{}, false
	}
	return w.byDue[0], true
}

// pop removes the earliest timer and records its offset as delivered.
func (w *waiting) pop() item {
	it := heap.Pop(&w.byDue).(item)
	if w.gone == nil {
		w.gone = make(map[int64]struct{})
	}
	w.gone[it.off] = struct{}{}
	return it
}

// watermark returns the lowest offset still waiting, or next when none is.
func (w *waiting) watermark(next int64) int64 {
	for len(w.byOff) > 0 {
		o := w.byOff[0]
		if _, ok := w.gone[o]; !ok {
			return o
		}
		delete(w.gone, o)
		heap.Pop(&w.byOff)
	}
	return next
}

// unpop puts back a timer popped for a delivery that failed; no watermark
// call may come between its pop and unpop.
func (w *waiting) unpop(it item) {
	heap.Push(&w.byDue, it)
	delete(w.gone, it.off)
}
