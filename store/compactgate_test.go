package store

import (
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// fakeCompactDB is a pebble.DBForCompaction with a fixed number of waiting
// compactions; each one it starts is reported on started, with its handle.
type fakeCompactDB struct {
	allowed int

	mu      sync.Mutex
	waiting int

	started chan pebble.CompactionGrantHandle
}

func (f *fakeCompactDB) GetAllowedWithoutPermission() int { return f.allowed }

func (f *fakeCompactDB) GetWaitingCompaction() (bool, pebble.WaitingCompaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waiting > 0, pebble.WaitingCompaction{}
}

func (f *fakeCompactDB) Schedule(h pebble.CompactionGrantHandle) bool {
	f.mu.Lock()
	if f.waiting == 0 {
		f.mu.Unlock()
		return false
	}
	f.waiting--
	f.mu.Unlock()
	f.started <- h
	return true
}

func TestCompactionGateHoldsUntilRelease(t *testing.T) {
	db := &fakeCompactDB{allowed: 1, waiting: 2, started: make(chan pebble.CompactionGrantHandle, 2)}
	g := newCompactionGate()
	g.Register(2, db)
	if ok, _ := g.TrySchedule(); ok {
		t.Fatal("granted before release")
	}

	g.release()
	// The granter starts the waiting compaction by itself.
	first := <-db.started
	// At the limit: the DB asking directly is refused, and the second
	// waiting compaction starts only once the first is done.
	if ok, _ := g.TrySchedule(); ok {
		t.Fatal("granted beyond the DB's allowed concurrency")
	}
	first.Done()
	second := <-db.started
	second.Done()

	g.Unregister()
	if ok, _ := g.TrySchedule(); ok {
		t.Fatal("granted after Unregister")
	}
}

func TestCompactionGateUnregisterWithoutRelease(t *testing.T) {
	// A failed Open never releases the gate; Unregister must not wait for
	// a granter that was never started.
	g := newCompactionGate()
	g.Register(2, &fakeCompactDB{allowed: 1})
	g.Unregister()
}

// TestStoreCompactsAfterOpen checks that an opened store's gate grants: a
// manual compaction waits for the scheduler's grant.
func TestStoreCompactsAfterOpen(t *testing.T) {
	s, _, _ := openMem(t)
	for i := range 100 {
		mustPut(t, s, msg("T", int32(i%4), "body"))
	}
	for _, db := range []*pebble.DB{s.log, s.db} {
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := db.Compact(t.Context(), []byte{0}, []byte{0xff}, true); err != nil {
			t.Fatal(err)
		}
		if n := db.Metrics().Compact.Count; n == 0 {
			t.Fatal("no compaction ran")
		}
	}
}
