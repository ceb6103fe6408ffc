package store

// ReleaseMemory flushes both databases' memtables to tables on disk, so
// that the memory the memtables filled (up to MemTableSize each, several
// queued under load) can go back to the operating system while the broker
// idles: a new memtable is filled only as writes come. It writes no new
// data and loses none: what it flushes is already in the WAL. It is for an
// idle store; under writes it only costs a flush.
func (s *Store) ReleaseMemory() error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	if err := s.log.Flush(); err != nil {
		return err
	}
	return s.db.Flush()
}
