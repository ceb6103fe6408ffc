package store

import "github.com/cockroachdb/pebble/v2"

// ReleaseMemory flushes both databases' memtables to tables on disk, so
// that the memory the memtables filled (up to MemTableSize each, several
// queued under load) can go back to the operating system while the broker
// idles: a new memtable is filled only as writes come. It then empties the
// block cache: what a drained consumer read stays cached until evicted,
// and nothing evicts it while nothing is read (up to CacheSize), so the
// next pull of an idle broker reads its blocks from disk again. It writes
// no new data and loses none: what it flushes is already in the WAL. It is
// for an idle store; under writes it only costs a flush.
func (s *Store) ReleaseMemory() error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if err := s.log.Flush(); err != nil {
		return err
	}
	if err := s.db.Flush(); err != nil {
		return err
	}
	// A reservation of the whole capacity evicts every block not in use;
	// released at once, it leaves the capacity as it was.
	s.cache.Reserve(int(s.cache.MaxSize()))()
	return nil
}

// CachedBytes is the bytes of blocks in the block cache (for tests and
// tools).
func (s *Store) CachedBytes() int64 { return s.cache.Size() }

// BackgroundWork counts both databases' flushes and compactions, done and
// under way: it moves while Pebble works after the writes stopped (a
// compaction of the tables the last flushes wrote allocates its buffers
// anew), so an idle release that waits for it to settle is not undone by
// that work (for the broker's idle release). 0 once closed.
func (s *Store) BackgroundWork() uint64 {
	if err := s.readLock(); err != nil {
		return 0
	}
	defer s.closeMu.RUnlock()
	var n int64
	for _, db := range []*pebble.DB{s.log, s.db} {
		m := db.Metrics()
		n += m.Flush.Count + m.Compact.Count + m.Compact.NumInProgress + m.Flush.NumInProgress
	}
	return uint64(n)
}
