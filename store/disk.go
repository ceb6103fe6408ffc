package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// Disk space is a state of the store, as in RocketMQ's DefaultMessageStore
// (CleanCommitLogService.isSpaceToDelete and its runningFlags):
//
//   - above DiskMaxUsedSpaceRatio (75%) retention runs at every disk check
//     instead of every RetentionInterval;
//   - above DiskSpaceCleanForciblyRatio (85%) it also deletes the oldest
//     log whether it expired or not (cleanImmediately): one slice per
//     check, its tables dropped before usage is read again (see watchDisk);
//   - above DiskSpaceWarningLevelRatio (90%) appends are refused with
//     ErrDiskFull, well before a write can fail with ENOSPC.
//
// The state is re-read every DiskCheckInterval (one statfs, with the log
// not yet flushed counted as used: see readUsage) and before a large Put,
// and writes resume by themselves once usage is back under the warning
// level. Only appends are refused: offset commits, topic changes
// and truncations are small and keep working, and they are what frees
// space or lets consumers go on.
//
// Why refuse early rather than recover from ENOSPC: Pebble cannot go on
// after a failed WAL write (its next WAL rotation panics), so a failed write
// latches the store (ErrFailed) until it is reopened, and Close then skips
// the flushes Pebble would panic in. A failure of the log's database alone
// refuses only appends and truncations: offset commits and topic changes go
// on in the database beside it.

// ErrDiskFull is returned (wrapped with the usage) by Put and AppendOp while
// the disk is above DiskSpaceWarningLevelRatio.
var ErrDiskFull = errors.New("store: disk full")

// largePut is the batch size from which Put reads the disk usage itself
// instead of trusting the last periodic check.
const largePut = 1 << 20

// writeAmp is what an appended byte is taken to cost on disk before the
// next statfs sees it: the WAL, then the memtable's flush into a table.
const writeAmp = 2

// diskState is the watcher's view of the filesystem under Options.Dir.
type diskState struct {
	mu sync.Mutex // serialises checks, so transitions are logged once
	// usedBP is the last usage read, in hundredths of a percent; -1 when
	// unknown (a filesystem that cannot say, such as vfs.NewMem).
	usedBP atomic.Int32
	full   atomic.Bool
	// total and avail are the last read's bytes (total 0 when unknown);
	// appended counts the bytes appended since it.
	total, avail atomic.Uint64
	appended     atomic.Int64
}

// mayCross says the bytes appended since the last read, writeAmp times
// over, may have taken usage above the warning ratio.
func (d *diskState) mayCross(warningRatio int) bool {
	total := d.total.Load()
	if total == 0 {
		return false
	}
	grown := uint64(max(d.appended.Load(), 0)) * writeAmp
	used := total - min(d.avail.Load(), total) + grown
	return used*100 > total*uint64(warningRatio)
}

// DiskUsage is the last disk usage the store read, in percent of the
// filesystem holding Options.Dir (-1 if the filesystem cannot say; as
// readUsage counts it), and whether appends are refused for it.
func (s *Store) DiskUsage() (usedPct float64, full bool) {
	return float64(s.disk.usedBP.Load()) / 100, s.disk.full.Load()
}

// Writable returns nil if the store accepts appends now, else why not:
// ErrDiskFull (usage above DiskSpaceWarningLevelRatio) or ErrFailed (a
// write could not be made durable; reopen needed).
func (s *Store) Writable() error {
	if errp := s.failed.Load(); errp != nil {
		return *errp
	}
	if s.disk.full.Load() {
		return s.diskFullErr()
	}
	return nil
}

func (s *Store) diskFullErr() error {
	return fmt.Errorf("%w: %s is %.1f%% used, above diskSpaceWarningLevelRatio %d%%",
		ErrDiskFull, s.opts.Dir, float64(s.disk.usedBP.Load())/100, s.opts.DiskSpaceWarningLevelRatio)
}

// refuseAppend is the disk check of Put and AppendOp; size is the batch's
// size in bytes; check reads the usage when it must be read again:
// checkDisk for a caller holding the close lock (Put), checkDiskShared for
// one that does not (AppendOp), which so takes it only then.
//
// Usage is read again (one statfs) for a large batch, and as soon as the
// bytes appended since the last read may have crossed the warning ratio:
// at tens of MB/s a second between periodic checks is a large part of a
// small disk, and the refusal must come before ENOSPC.
func (s *Store) refuseAppend(size int, check func() int32) error {
	s.disk.appended.Add(int64(size))
	if size >= largePut || s.disk.mayCross(s.opts.DiskSpaceWarningLevelRatio) {
		check()
	}
	if s.disk.full.Load() {
		return s.diskFullErr()
	}
	return nil
}

// readUsage returns the usage of the filesystem under Dir in hundredths
// of a percent, counting space reserved for root as used (what a non-root
// writer sees), or -1 if the filesystem cannot say; and settled, the usage
// once the tables Pebble is deleting are gone.
//
// Both are what statfs will show once the log's database has caught up,
// as TestDiskModel measured it on a small disk (100% read before):
//
//   - The log not yet flushed from its memtables counts as used. It lands
//     on disk as a table at the flush, a memtable (MemTableSize) at once,
//     while the write-ahead log it was appended to is a recycled file
//     statfs counted long ago: statfs alone let appends go on until that
//     flush crossed the warning ratio, with the next memtable still to
//     come. Counted before the flush, usage that refuses appends is also
//     above the forced-clean ratio, so forced cleaning frees room even
//     while a memtable that is not full waits for a flush.
//   - In settled, the tables Pebble made obsolete count as free: it
//     deletes them in the background, after the excise (or compaction)
//     returns. Read right after a forced clean freed its slice, statfs
//     still counted it, so the next check deleted another. Appends wait
//     for the deletion itself (used counts those tables): accepted
//     meanwhile, they took the disk to 100% before it came.
//
// The memtables are read before statfs and the obsolete tables after it,
// so a flush or a deletion in between makes the usage higher, not lower.
func (s *Store) readUsage() (used, settled int32) {
	// What is appended from now on counts towards the next read.
	s.disk.appended.Store(0)
	unflushed := s.log.Metrics().WAL.Size // the memtables' log
	u, err := s.opts.FS.GetDiskUsage(s.opts.Dir)
	if err != nil || u.TotalBytes == 0 {
		s.disk.total.Store(0)
		return -1, -1
	}
	deleting := s.log.Metrics().Table.Local.ObsoleteSize
	total := u.TotalBytes
	avail := min(u.AvailBytes, total)
	avail -= min(unflushed, avail)
	s.disk.total.Store(total)
	s.disk.avail.Store(avail)
	return int32((total - avail) * 10000 / total), int32((total - min(avail+deleting, total)) * 10000 / total)
}

// checkDiskShared is checkDisk for a caller that does not hold the close
// lock (the watcher, AppendOp); -1 once the store is closed.
func (s *Store) checkDiskShared() (settled int32) {
	if err := s.readLock(); err != nil {
		return -1
	}
	defer s.closeMu.RUnlock()
	return s.checkDisk()
}

// checkDisk reads the usage and updates the state; it returns the settled
// usage (see readUsage), which the watcher's forced cleaning goes by. The
// caller holds the close lock shared (readUsage reads the log's metrics),
// or is Open.
func (s *Store) checkDisk() (settled int32) {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	bp, settled := s.readUsage()
	s.disk.usedBP.Store(bp)
	pct := float64(bp) / 100
	full := bp >= 0 && over(bp, s.opts.DiskSpaceWarningLevelRatio)
	if was := s.disk.full.Swap(full); was != full {
		if full {
			s.opts.Logger.Errorf("store: disk %s is %.1f%% used, above diskSpaceWarningLevelRatio %d%%: refusing appends until it is not",
				s.opts.Dir, pct, s.opts.DiskSpaceWarningLevelRatio)
		} else {
			s.opts.Logger.Infof("store: disk %s is %.1f%% used: appends accepted again", s.opts.Dir, pct)
		}
		if s.opts.OnDiskFull != nil {
			s.opts.OnDiskFull(full)
		}
	}
	return settled
}

// over says usage bp (hundredths of a percent) is above ratio (percent).
func over(bp int32, ratio int) bool { return bp >= 0 && int(bp) > ratio*100 }

// watchDisk is the periodic disk check (every DiskCheckInterval).
//
// A forced clean deletes one slice per check, chosen once at the check
// (forceCleanCutoff from the log's start then), frees what it deleted
// (Retain frees what it deletes: freeDeletedLocked) and reads the usage
// again (settled: the tables Pebble is deleting count as gone, see
// readUsage): a truncation is a range tombstone, which frees nothing by
// itself, so without that every check would see the same usage and delete
// another slice. The next slice is only chosen at a later check that still
// finds usage above diskSpaceCleanForciblyRatio; below it forced cleaning
// stops, so it never deletes more than it takes for appends (refused only
// above the higher warning ratio) to go on.
func (s *Store) watchDisk() {
	bp := s.checkDiskShared()
	lo := s.minPhys.Load()
	var before map[QueueID]consumequeue.Range
	if over(bp, s.opts.DiskMaxUsedSpaceRatio) {
		forced := false
		if over(bp, s.opts.DiskSpaceCleanForciblyRatio) {
			forced = s.planForceClean()
		} else {
			s.forceCut.Store(0)
		}
		if !s.opts.ProposedRetention { // else the leader proposes the cut (RetentionOp)
			if forced && s.opts.OnForcedClean != nil {
				before = s.Queues()
			}
			s.retainNow()
		}
	} else {
		s.forceCut.Store(0)
	}
	// Truncations applied meanwhile (a replica's, proposed by its leader)
	// are freed by the freer as they come; freed here too, so that the
	// usage read next counts them gone. Not waited for while retention
	// runs (it frees what it deleted when done): a long pass would hold
	// the checks back.
	if s.retainMu.TryLock() {
		s.freeDeletedLocked()
		s.retainMu.Unlock()
	}
	hi := s.minPhys.Load()
	if hi <= lo {
		return
	}
	s.checkDiskShared()
	if before != nil {
		s.opts.OnForcedClean(forcedClean(lo, hi, before, s.Queues()))
	}
}

// ForcedClean is what one forced clean deleted (Options.OnForcedClean):
// the log in [From, To) and, by queue, the offsets in [Min, Max). What
// expired in the same check is counted with it.
type ForcedClean struct {
	From, To int64
	Queues   map[QueueID]consumequeue.Range
}

// forcedClean is the ForcedClean between the queues' ranges before and
// after it.
func forcedClean(from, to int64, before, after map[QueueID]consumequeue.Range) ForcedClean {
	fc := ForcedClean{From: from, To: to, Queues: make(map[QueueID]consumequeue.Range)}
	for id, b := range before {
		if a, ok := after[id]; ok && a.Min > b.Min {
			fc.Queues[id] = consumequeue.Range{Min: b.Min, Max: a.Min}
		}
	}
	return fc
}

// planForceClean sets the cutoff of this check's forced clean, unless the
// last one is not done yet (a replicated store's leader proposes it with
// its next retention); it says whether a forced cut is due.
func (s *Store) planForceClean() bool {
	if err := s.readLock(); err != nil {
		return false
	}
	defer s.closeMu.RUnlock()
	lo, hi := s.minPhys.Load(), s.readablePhys.Load()
	if s.forceCut.Load() > lo {
		return true
	}
	if hi <= lo {
		return false
	}
	t, ok, err := commitlog.SeekGE(s.log, forceCleanCutoff(lo, hi))
	if err != nil {
		s.opts.Logger.Errorf("store: forced clean: %v", err)
		return false
	}
	if !ok || t.Phys >= hi {
		return false
	}
	s.forceCut.Store(t.Phys)
	return true
}

// forceCleanCutoff is where a forced clean cuts: the oldest tenth of the
// live log (at least one truncate step), as RocketMQ deletes its oldest
// files regardless of age above diskSpaceCleanForciblyRatio. The newest
// record is always kept.
func forceCleanCutoff(lo, hi int64) int64 {
	return min(lo+max((hi-lo)/10, truncateStep), hi-1)
}

// failReason says why a write error latches the store, for the operator.
func failReason(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w (the disk filled before the store's early refusal; Pebble cannot continue after a failed write-ahead-log write, so appends are refused until the broker is restarted with space freed)", err)
	}
	return err
}

// checkOpenSpace refuses to open a store on a disk without room for
// Pebble's recovery (a new WAL, a MANIFEST, the flush of the replayed
// WAL): there Pebble fails its background writes over and over instead of
// returning, so Open would not end.
func (s *Store) checkOpenSpace() error {
	if s.opts.MinOpenFreeBytes < 0 {
		return nil
	}
	u, err := s.opts.FS.GetDiskUsage(s.opts.Dir)
	if err != nil {
		// A directory not there yet: its parent's filesystem.
		u, err = s.opts.FS.GetDiskUsage(s.opts.FS.PathDir(s.opts.Dir))
	}
	if err != nil || u.TotalBytes == 0 {
		return nil // the filesystem cannot say (vfs.NewMem)
	}
	if int64(u.AvailBytes) < s.opts.MinOpenFreeBytes {
		return fmt.Errorf("%w: cannot open %s: %d KiB free, opening needs at least %d KiB (to replay and flush the write-ahead log); free space and start again",
			ErrDiskFull, s.opts.Dir, u.AvailBytes>>10, s.opts.MinOpenFreeBytes>>10)
	}
	return nil
}
