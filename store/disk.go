package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
)

// Disk space is a state of the store, as in RocketMQ's DefaultMessageStore
// (CleanCommitLogService.isSpaceToDelete and its runningFlags):
//
//   - above DiskMaxUsedSpaceRatio (75%) retention runs at every disk check
//     instead of every RetentionInterval;
//   - above DiskSpaceCleanForciblyRatio (85%) it also deletes the oldest
//     log whether it expired or not (cleanImmediately), a step per check;
//   - above DiskSpaceWarningLevelRatio (90%) appends are refused with
//     ErrDiskFull, well before a write can fail with ENOSPC.
//
// The state is re-read every DiskCheckInterval (one statfs) and before a
// large Put, and writes resume by themselves once usage is back under the
// warning level. Only appends are refused: offset commits, topic changes
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

// diskState is the watcher's view of the filesystem under Options.Dir.
type diskState struct {
	mu sync.Mutex // serialises checks, so transitions are logged once
	// usedBP is the last usage read, in hundredths of a percent; -1 when
	// unknown (a filesystem that cannot say, such as vfs.NewMem).
	usedBP atomic.Int32
	full   atomic.Bool
}

// DiskUsage is the last disk usage the store read, in percent of the
// filesystem holding Options.Dir (-1 if the filesystem cannot say), and
// whether appends are refused for it.
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
// size in bytes.
func (s *Store) refuseAppend(size int) error {
	if size >= largePut {
		s.checkDisk()
	}
	if s.disk.full.Load() {
		return s.diskFullErr()
	}
	return nil
}

// readUsage returns the usage of the filesystem under Dir in hundredths
// of a percent, counting space reserved for root as used (what a non-root
// writer sees), or -1 if the filesystem cannot say.
func (s *Store) readUsage() int32 {
	u, err := s.opts.FS.GetDiskUsage(s.opts.Dir)
	if err != nil || u.TotalBytes == 0 {
		return -1
	}
	avail := min(u.AvailBytes, u.TotalBytes)
	return int32((u.TotalBytes - avail) * 10000 / u.TotalBytes)
}

// checkDisk reads the usage and updates the state; on the watcher's
// ticker it also runs retention early when usage asks for it.
func (s *Store) checkDisk() (bp int32) {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	bp = s.readUsage()
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
	return bp
}

// over says usage bp (hundredths of a percent) is above ratio (percent).
func over(bp int32, ratio int) bool { return bp >= 0 && int(bp) > ratio*100 }

// watchDisk is the periodic disk check (every DiskCheckInterval).
func (s *Store) watchDisk() {
	bp := s.checkDisk()
	if !over(bp, s.opts.DiskMaxUsedSpaceRatio) {
		s.forceClean.Store(false)
		return
	}
	s.forceClean.Store(over(bp, s.opts.DiskSpaceCleanForciblyRatio))
	s.retainNow()
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
