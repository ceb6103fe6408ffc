package remoting

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"testing"
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
// binary a frame put back is overwritten first, so that anything keeping a
// piece of it reads garbage and fails its test rather than passing by
// luck.

// Frames of minPooledFrame..maxPooledFrame bytes come from the pools, in
// classes of powers of two from 2 KiB: a 1 KiB message's send (about 1.2
// KiB) takes a 2 KiB buffer, a batch of 32 of them (about 37 KiB) a 64 KiB
// one. Smaller frames cost little to allocate; larger ones are rare, and
// a pool of them would pin megabytes between collections.
const (
	minPooledFrame = 1 << 10
	maxPooledFrame = 64 << 10
	minFrameShift  = 11 // the smallest class, 2 KiB
)

// framePools hold *[N]byte, so that putting one back allocates nothing.
var framePools [6]sync.Pool

// poisonFrames says whether a frame put back is overwritten first: in test
// binaries.
var poisonFrames = testing.Testing()

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
	if v := framePools[k].Get(); v != nil {
		switch a := v.(type) {
		case *[2 << 10]byte:
			return a[:0]
		case *[4 << 10]byte:
			return a[:0]
		case *[8 << 10]byte:
			return a[:0]
		case *[16 << 10]byte:
			return a[:0]
		case *[32 << 10]byte:
			return a[:0]
		case *[64 << 10]byte:
			return a[:0]
		}
	}
	return make([]byte, 0, 1<<(k+minFrameShift))
}

// putFrame gives a frame back to its pool when its capacity is exactly a
// class's; any other is left to the collector.
func putFrame(b []byte) {
	k := poolOf(b)
	if k < 0 {
		return
	}
	b = b[:cap(b)]
	if poisonFrames {
		for i := range b {
			b[i] = 0xA5
		}
		if h := putFrameHook.Load(); h != nil {
			(*h)(b)
		}
	}
	switch k {
	case 0:
		framePools[0].Put((*[2 << 10]byte)(b))
	case 1:
		framePools[1].Put((*[4 << 10]byte)(b))
	case 2:
		framePools[2].Put((*[8 << 10]byte)(b))
	case 3:
		framePools[3].Put((*[16 << 10]byte)(b))
	case 4:
		framePools[4].Put((*[32 << 10]byte)(b))
	case 5:
		framePools[5].Put((*[64 << 10]byte)(b))
	}
}
