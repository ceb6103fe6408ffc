package memlimit

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// HeapFloor is the least room a server process's collector leaves between
// its live heap and the next collection (Apply's floor): at GOGC=100 a
// heap of L live bytes is collected after L more are allocated, and a
// broker's own live heap is small (about 4 MiB on a cgo build, where
// Pebble's memtables and block cache are C memory), so it collected every
// 4 MiB allocated, about every 1,300 messages stored, and each cycle's
// fixed cost (a worker woken on every P, the stacks and globals scanned,
// the sweep) added up to a tenth of its CPU per message
// (docs/performance-history.md, session 21). With the floor such a heap
// is collected after 16 MiB instead; a live heap of 16 MiB or more (a
// static build, whose Pebble memory is on the Go heap) is paced as before,
// so its peaks under load do not move, and the soft limit caps them as
// before.
const HeapFloor = 16 << 20

// liveHeapMetric is the heap the last cycle marked live.
const liveHeapMetric = "/gc/heap/live:bytes"

// floorPercent is the GOGC that leaves at least floor bytes of room over
// a live heap of live bytes, and never less than base (the process's own
// GOGC).
func floorPercent(live uint64, floor uint64, base int) int {
	if live == 0 {
		live = 1
	}
	p := floor * 100 / live
	if p > 1000 {
		p = 1000 // a nearly empty heap: room of ten times it, no more
	}
	return max(int(p), base)
}

// gcSentinel is an object whose finalizer runs once per collection: each
// run re-paces the collector and arms a new one.
type gcSentinel struct{ _ *int } // a pointer keeps it off the tiny allocator, whose objects may never be finalized

// keepFloor paces every following collection so that it leaves at least
// floor bytes of room over the live heap, re-reading the live heap after
// each cycle (a finalizer runs after the cycle that found its object
// unreachable).
func keepFloor(floor uint64, base int) {
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetGCPercent(floorPercent(sample[0].Value.Uint64(), floor, base))
			}
			arm()
		})
	}
	arm()
}
