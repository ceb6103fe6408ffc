package broker

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/runnelmq/runnel/internal/periodic"
)

// Memory that comes back. Under load Pebble fills memtables and the Go
// heap grows to twice what is live (the collector's headroom); when the
// load stops nothing shrinks by itself: no allocation means no collection,
// so the heap's goal stays where the load left it and the runtime keeps
// the pages. Once the broker has been idle for a whole interval (nothing
// appended to the store, no collection), it flushes the store's memtables
// and returns the free heap to the operating system, once per idle spell.

// idleRelease decides when to release: tick is called every interval with
// the activity counter's current value.
type idleRelease struct {
	activity func() uint64
	release  func()
	last     uint64
	seen     bool // last holds a value
	done     bool // released in this idle spell
}

// tick releases when nothing happened since the last tick, unless it did
// already in this idle spell; it reports whether it released.
func (r *idleRelease) tick() bool {
	now := r.activity()
	idle := r.seen && now == r.last
	r.last, r.seen = now, true
	if !idle {
		r.done = false
		return false
	}
	if r.done {
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
		activity: func() uint64 {
			metrics.Read(gc)
			return gc[0].Value.Uint64() + uint64(b.Store().MaxPhysOffset())
		},
		release: func() {
			if err := b.Store().ReleaseMemory(); err != nil {
				b.log.Warn("broker: flushing memtables while idle failed", "err", err)
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
	periodic.Run(b.stop, every, func() { r.tick() })
}

// MemoryReleases counts the idle spells in which the broker gave memory
// back (for tests and tools).
func (b *Broker) MemoryReleases() int64 { return b.memReleases.Load() }
