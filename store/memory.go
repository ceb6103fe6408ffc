package store

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// ReleaseMemory gives back what an idle store holds in memory: Pebble's
// memtables and the block cache. It writes no new data and loses none; it
// is for an idle store (under writes it costs a flush and a reopen).
//
// Flushing is not enough for the memtables. Pebble keeps each database's
// memtable memory for good while it is open: the next memtable only grows
// (256 KiB doubling up to MemTableSize), and the last one flushed is kept
// for reuse, so two memtables of MemTableSize per database stay allocated
// and written through (12 MiB of an idle broker's anonymous 17 MiB after a
// write load). So it closes and opens both databases again (see reopen),
// which starts them with memtables of 256 KiB. Where something holds the
// store at that moment (a read, a write, a snapshot streaming to a
// replica), it only flushes them.
//
// It then empties the block cache: what a drained consumer read stays
// cached until evicted, and nothing evicts it while nothing is read (up to
// CacheSize), so the next pull of an idle broker reads its blocks from disk
// again.
func (s *Store) ReleaseMemory() error {
	reopened, err := s.reopen()
	if err != nil {
		return err
	}
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if !reopened {
		if err := s.flushDBs(); err != nil {
			return err
		}
	}
	// A reservation of the whole capacity evicts every block not in use;
	// released at once, it leaves the capacity as it was.
	s.cache.Reserve(int(s.cache.MaxSize()))()
	return nil
}

// reopen flushes, closes and opens both databases again, if nothing holds
// the store: it takes the close lock only if it is free (every read and
// every write holds it shared, a batch from its making to its commit, for
// a batch is bound to the database that made it), so it never waits for a
// reader and none waits long for it (a flush of what came since the idle
// detector looked, and two opens replaying no WAL: milliseconds). It
// leaves alone a store that is closing or failed, or whose disk is too
// full to be sure of opening again (checkOpenSpace, and the warning
// ratio). Once both are closed, a failure to open either fails the store:
// from then on reads and writes return that failure, and Close closes
// what is open.
func (s *Store) reopen() (bool, error) {
	if !s.closeMu.TryLock() {
		return false, nil
	}
	defer s.closeMu.Unlock()
	if s.closed || s.dbsGone {
		return false, nil
	}
	// Not under a checkpoint of Close's (which holds applyMu only).
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if s.closing || s.failed.Load() != nil || s.disk.full.Load() || s.checkOpenSpace() != nil ||
		s.memTableBytesLocked() <= reopenMinMemTables {
		return false, nil
	}
	// Flushed first, as Close does, so that opening replays no WAL.
	if err := s.flushDBs(); err != nil {
		return false, err
	}
	s.workBase.Add(workDone(s.log, false) + workDone(s.db, false))
	cerr := s.db.Close()
	if lerr := s.log.Close(); cerr == nil {
		cerr = lerr
	}
	s.dbsGone = true
	if cerr != nil {
		return false, s.fail(fmt.Errorf("reopen: close: %w", cerr))
	}
	logDB, db, release, err := s.openDBs()
	if err != nil {
		return false, s.fail(fmt.Errorf("reopen: %w", err))
	}
	s.log, s.db, s.dbsGone = logDB, db, false
	release()
	s.reopens.Add(1)
	return true, nil
}

// reopenMinMemTables is the memtable memory below which a release does
// not reopen: opened again, the two databases hold 1.5 MiB of memtables
// (in each, the one that replayed the empty WAL, 256 KiB, kept for reuse,
// and one of 512 KiB), so below that a reopen frees nothing; a broker that
// stored little (5,000 connections and no write) held 1 MiB more after its
// release than without one. A variable for tests.
var reopenMinMemTables int64 = 2 << 20

// flushDBs flushes both databases' memtables; the caller holds closeMu.
func (s *Store) flushDBs() error {
	if err := s.log.Flush(); err != nil {
		return err
	}
	return s.db.Flush()
}

// workDone is a database's flushes and compactions done and, with
// inProgress, those under way.
func workDone(db *pebble.DB, inProgress bool) uint64 {
	m := db.Metrics()
	n := m.Flush.Count + m.Compact.Count
	if inProgress {
		n += m.Flush.NumInProgress + m.Compact.NumInProgress
	}
	return uint64(n)
}

// CachedBytes is the bytes of blocks in the block cache (for tests and
// tools).
func (s *Store) CachedBytes() int64 { return s.cache.Size() }

// MemTableBytes is the memory both databases hold for memtables: those
// in use and the one each keeps for reuse (for tests and tools).
func (s *Store) MemTableBytes() int64 {
	if err := s.readLock(); err != nil {
		return 0
	}
	defer s.closeMu.RUnlock()
	return s.memTableBytesLocked()
}

// memTableBytesLocked is MemTableBytes; the caller holds closeMu.
func (s *Store) memTableBytesLocked() int64 {
	var n int64
	for _, db := range []*pebble.DB{s.log, s.db} {
		m := db.Metrics()
		n += int64(m.MemTable.Size + m.MemTable.ZombieSize)
	}
	return n
}

// Reopens counts the databases' reopens by ReleaseMemory (for tests).
func (s *Store) Reopens() int64 { return s.reopens.Load() }

// BackgroundWork counts both databases' flushes and compactions, done and
// under way: it moves while Pebble works after the writes stopped (a
// compaction of the tables the last flushes wrote allocates its buffers
// anew), so an idle release that waits for it to settle is not undone by
// that work (for the broker's idle release). It never goes back (a reopen
// carries the count over). 0 once closed.
func (s *Store) BackgroundWork() uint64 {
	if err := s.readLock(); err != nil {
		return 0
	}
	defer s.closeMu.RUnlock()
	return s.workBase.Load() + workDone(s.log, true) + workDone(s.db, true)
}
