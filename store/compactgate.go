package store

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/internal/periodic"
)

// compactionGate is the Pebble CompactionScheduler of a store. It grants no
// compaction until release is called, and from then on grants as many as the
// DB allows, as Pebble's default scheduler does.
//
// Why: after a crash, pebble.Open flushes the replayed WAL, the flush makes
// the LSM ask for a compaction, and Open then waits for every running
// compaction before it returns (it scans for obsolete files only when none
// runs). After a write burst that compaction can take longer than the rest
// of Open together. Held back until the store is open, the same compaction
// runs in the background instead, which is all it needs: compactions shape
// the LSM, none is needed for correctness. Delete-only and download
// compactions do not ask the scheduler, and flushes never do.
//
// Locking: Pebble orders the scheduler's mutex after the DB's, and the DB
// calls TrySchedule with its mutex held, so the granter never holds mu while
// it calls into the DB.
type compactionGate struct {
	db pebble.DBForCompaction // set by Register, before any other call

	mu struct {
		sync.Mutex
		released     bool
		unregistered bool
		running      int // compactions granted and not yet Done
	}
	// poke wakes the granter; one slot, as a wake-up is all it carries.
	poke chan struct{}
	stop chan struct{}
	done chan struct{} // closed when the granter goroutine exits
}

// gateRecheck is how often the granter looks for work nobody told it
// about (the DB's allowed concurrency can grow without a call to the
// scheduler, e.g. for a manual compaction); Pebble's default uses the same.
const gateRecheck = 100 * time.Millisecond

func newCompactionGate() *compactionGate {
	return &compactionGate{
		poke: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
}

var _ pebble.CompactionScheduler = (*compactionGate)(nil)

// Register implements pebble.CompactionScheduler.
func (g *compactionGate) Register(_ int, db pebble.DBForCompaction) { g.db = db }

// release lets compactions run and starts the granter, which picks up the
// compaction the DB has been waiting with. Called once, after a successful
// Open; the granter only exists after it, so a failed Open leaves nothing.
func (g *compactionGate) release() {
	g.mu.Lock()
	g.mu.released = true
	g.mu.Unlock()
	go g.granter()
	g.wake()
}

// Unregister implements pebble.CompactionScheduler: after it returns the
// gate never calls the DB again. Pebble calls it from DB.Close without the
// DB's mutex, so waiting for the granter's calls to finish cannot deadlock.
func (g *compactionGate) Unregister() {
	g.mu.Lock()
	g.mu.unregistered = true
	released := g.mu.released
	g.mu.Unlock()
	if released {
		close(g.stop)
		<-g.done
	}
}

// TrySchedule implements pebble.CompactionScheduler.
func (g *compactionGate) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.mu.released || g.mu.unregistered || g.db.GetAllowedWithoutPermission() <= g.mu.running {
		return false, nil
	}
	g.mu.running++
	return true, gateGrant{g}
}

// UpdateGetAllowedWithoutPermission implements pebble.CompactionScheduler;
// the DB calls it after a flush, which may allow more compactions.
func (g *compactionGate) UpdateGetAllowedWithoutPermission() { g.wake() }

func (g *compactionGate) wake() {
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

func (g *compactionGate) granter() {
	defer close(g.done)
	periodic.RunKicked(g.stop, g.poke, gateRecheck, g.grant)
}

// grant starts waiting compactions while the DB allows more. Each slot is
// reserved before the DB is asked, so TrySchedule, which runs concurrently
// from the DB's own goroutines, never overshoots the limit.
func (g *compactionGate) grant() {
	for {
		g.mu.Lock()
		if g.mu.unregistered || g.db.GetAllowedWithoutPermission() <= g.mu.running {
			g.mu.Unlock()
			return
		}
		g.mu.running++
		g.mu.Unlock()
		if waiting, _ := g.db.GetWaitingCompaction(); !waiting || !g.db.Schedule(gateGrant{g}) {
			g.done1()
			return
		}
	}
}

// done1 returns a compaction's slot.
func (g *compactionGate) done1() {
	g.mu.Lock()
	g.mu.running--
	g.mu.Unlock()
}

// gateGrant is the pebble.CompactionGrantHandle of one granted compaction.
type gateGrant struct{ g *compactionGate }

func (gateGrant) Started()                                          {}
func (gateGrant) MeasureCPU(pebble.CompactionGoroutineKind)         {}
func (gateGrant) CumulativeStats(pebble.CompactionGrantHandleStats) {}

// Done frees the slot and lets the granter start the next waiting
// compaction, as the DB does not ask again while one is waiting.
func (h gateGrant) Done() {
	h.g.done1()
	h.g.wake()
}
