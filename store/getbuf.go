package store

import (
	"math/bits"
	"sync"
)

// Buffers for a Get's records. A consumer draining a topic pulls 32
// records at a time, a 35 KB buffer for 1 KiB messages: a large object to
// Go's allocator (zeroed, on spans of its own, and often on pages the
// scavenger had returned, so first touched by a page fault), and with the
// client's copy most of the bytes a broker allocated while delivering. A
// caller done with a GetResult's Messages hands them back (Recycle), and
// the next Get reuses them.
//
// Buffers come in power-of-two classes from minGetBuf to maxGetBuf; a Get
// asking for more or less allocates as before, and a buffer that grew past
// its class while being filled is left to the collector.
const (
	minGetBuf  = 4 << 10
	maxGetBuf  = 1 << 20
	getClasses = 9 // 4 KiB << 0 .. 4 KiB << 8 (1 MiB)
)

var getBufs [getClasses]sync.Pool // of *[]byte, class i of cap minGetBuf<<i

// getBufClass is the smallest class holding n bytes, or -1 for none.
func getBufClass(n int) int {
	if n > maxGetBuf {
		return -1
	}
	if n <= minGetBuf {
		return 0
	}
	return bits.Len(uint(n-1)) - bits.Len(uint(minGetBuf-1))
}

// takeGetBuf returns an empty buffer of at least n bytes' capacity and
// the handle Recycle gives back (nil when it is not pooled).
func takeGetBuf(n int) ([]byte, *[]byte) {
	c := getBufClass(n)
	if c < 0 || n < minGetBuf/2 {
		// Small ones are cheap to allocate; a 4 KiB class for a 100-byte
		// answer would only hold memory.
		return make([]byte, 0, n), nil
	}
	if p, _ := getBufs[c].Get().(*[]byte); p != nil {
		return (*p)[:0], p
	}
	p := new([]byte)
	*p = make([]byte, 0, minGetBuf<<c)
	return *p, p
}

// Recycle hands Messages back for a later Get to reuse. Call it at most
// once, when nothing refers to Messages any more (nor to the records in
// it); after it, res.Messages is nil. A result not recycled is simply
// collected.
func (res *GetResult) Recycle() {
	p, msgs := res.pooled, res.Messages
	res.pooled, res.Messages = nil, nil
	if res.store != nil && msgs != nil {
		res.store.recycled.Add(1)
	}
	if p == nil || cap(msgs) == 0 || &msgs[:1][0] != &(*p)[:1][0] {
		// Not pooled, or grown past its class while filled (append moved
		// it): the collector's.
		return
	}
	getBufs[getBufClass(cap(*p))].Put(p)
}
