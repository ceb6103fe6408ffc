package broker

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/runnelmq/runnel/internal/periodic"
)

// Memory that comes back. Under load Pebble fills memtables and the Go
// heap grows to twice what is live (the collector's headroom); when the
// load stops nothing shrinks by itself: no allocation means no collection,
// so the heap's goal stays where the load left it and the runtime keeps
// the pages. Once the broker has been idle for a whole interval (nothing
// appended to the store, no collection, no flush or compaction in Pebble),
// it has the store free its memtables (store.ReleaseMemory) and returns
// the free heap to the operating system, once per idle spell.

// idleRelease decides when to release: tick is called every quiet-th of
// the interval, and activity returns the activity counter's current value.
type idleRelease struct {
	activity func() uint64
	release  func()
	quiet    int // idle ticks in a row that make an idle spell (at least 1)
	last     uint64
	seen     bool // last holds a value
	idle     int  // ticks in a row that saw nothing happen
	done     bool // released in this idle spell
}

// idleTicks is how many ticks an interval holds: the release comes a
// quarter of an interval at most after the broker has been idle for one
// (20 to 25 s with the default), not up to twice the interval after, and
// Pebble's work after the load (a compaction) delays it by no more than
// that work.
const idleTicks = 4

// tick releases when nothing happened for quiet ticks in a row, unless it
// did already in this idle spell; it reports whether it released.
func (r *idleRelease) tick() bool {
	now := r.activity()
	idle := r.seen && now == r.last
	r.last, r.seen = now, true
	if !idle {
		r.idle, r.done = 0, false
		return false
	}
	if r.idle++; r.done || r.idle < max(r.quiet, 1) {
		return false
	}
	r.done = true
	r.release()
	// The release collects (its own activity): counted, it would end the
	// idle spell, and the release would come again two ticks later, and
	// so on while the broker idles, each time flushing empty memtables
	// (a new WAL file for each database).
	r.last = r.activity()
	return true
}

// releaseIdleMemory runs idleRelease every IdleMemoryRelease until Close.
func (b *Broker) releaseIdleMemory() {
	every := b.cfg.IdleMemoryRelease
	if every < 0 {
		return
	}
	gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	r := idleRelease{
		quiet: idleTicks,
		activity: func() uint64 {
			metrics.Read(gc)
			st := b.Store()
			return gc[0].Value.Uint64() + uint64(st.MaxPhysOffset()) + st.BackgroundWork()
		},
		release: func() {
			if err := b.Store().ReleaseMemory(); err != nil {
				b.log.Warn("broker: releasing the store's memory while idle failed", "err", err)
			}
			// Buffers in sync.Pools (request frames, netpoll's buffers)
			// outlive one collection, in the pools' victim caches; a
			// second one, FreeOSMemory's, frees them before the heap is
			// returned.
			runtime.GC()
			debug.FreeOSMemory()
			b.memReleases.Add(1)
		},
	}
	periodic.Run(b.stop, max(every/idleTicks, time.Millisecond), func() { r.tick() })
}

// MemoryReleases counts the idle spells in which the broker gave memory
// back (for tests and tools).
func (b *Broker) MemoryReleases() int64 { return b.memReleases.Load() }
