package remoting

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/runnelmq/runnel/internal/poison"
)

// Recycled request frames.
//
// A send's frame is the largest allocation a broker makes for it (its
// body, about 1.2 KiB a 1 KiB message), and garbage as soon as the store
// has copied the body: about a third of the bytes a produce allocated, and
// so of the collections it caused. The frames of a run (run.go) are
// recycled instead: a server's splitter takes frames of pooled sizes from
// these pools, and a run whose handler served it gives its frames back
// once its answers are written. The RunHandler contract (it keeps nothing
// of reqs) is what makes that safe; a frame that is not part of a served
// run (a lone request, a pull, a heartbeat) is never given back and is
// the collector's, as before.
//
// Invariant: a frame is put back only by Conn.serveRun, after the run
// handler returned and the run's answers (which carry no body of the
// requests: checked there) were encoded into the write buffer. In a test
// binary a frame put back is overwritten first (package poison).

// Frames of minPooledFrame..maxPooledFrame bytes come from the pools, in
// classes of powers of two from 2 KiB: a 1 KiB message's send (about 1.2
// KiB) takes a 2 KiB buffer, a batch of 32 of them (about 37 KiB) a 64 KiB
// one. Smaller frames cost little to allocate; larger ones are rare, and
// a pool of them would pin megabytes between collections.
const (
	minPooledFrame = 1 << 10
	minFrameShift  = 11 // the smallest class, 2 KiB
	maxFrameShift  = 16 // the largest, 64 KiB
	maxPooledFrame = 1 << maxFrameShift
)

// framePools[k] holds buffers of exactly 1<<(k+minFrameShift) bytes, each
// by its first byte: a pointer, so putting one back allocates nothing, and
// the class says its length.
var framePools [maxFrameShift - minFrameShift + 1]sync.Pool

// putFrameHook, when set (by a test), sees each frame put back.
var putFrameHook atomic.Pointer[func([]byte)]

// pooledFrame reports whether a frame has the capacity of a pool's buffers,
// so that putFrame takes it.
func pooledFrame(b []byte) bool { return poolOf(b) >= 0 }

// poolOf returns the pool whose buffers have b's capacity, or -1.
func poolOf(b []byte) int {
	k := frameClass(cap(b))
	if k < 0 || cap(b) != 1<<(k+minFrameShift) {
		return -1
	}
	return k
}

// frameClass returns the pool of a frame of n bytes, or -1.
func frameClass(n int) int {
	if n < minPooledFrame || n > maxPooledFrame {
		return -1
	}
	return max(bits.Len(uint(n-1))-minFrameShift, 0)
}

// getFrame returns an empty buffer with room for n bytes, from the pools
// when n is a pooled size.
func getFrame(n int) []byte {
	k := frameClass(n)
	if k < 0 {
		return make([]byte, 0, n)
	}
	size := 1 << (k + minFrameShift)
	if v := framePools[k].Get(); v != nil {
		return unsafe.Slice(v.(*byte), size)[:0]
	}
	return make([]byte, 0, size)
}

// putFrame gives a frame back to its pool when its capacity is exactly a
// class's; any other is left to the collector.
func putFrame(b []byte) {
	k := poolOf(b)
	if k < 0 {
		return
	}
	b = b[:cap(b)]
	poison.Overwrite(b)
	if h := putFrameHook.Load(); h != nil {
		(*h)(b)
	}
	framePools[k].Put(unsafe.SliceData(b))
}
