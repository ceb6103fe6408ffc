package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
	"github.com/runnelmq/runnel/store/meta"
)

// Retain runs retention as of now: it deletes the commit log below the
// first record younger than FileReservedTime, and further while the log is
// larger than DiskBudget, with the queue chunks and index segments that
// lie wholly below it, and frees the log it deleted (freeDeletedLocked)
// before it returns. It returns the number of log bytes deleted.
//
// The cutoff and each queue's new minimum are found outside the apply lock
// (binary searches); each OpTruncate covers at most truncateStep bytes of
// log, so writers wait only for a bounded batch at a time.
func (s *Store) Retain(now time.Time) (int64, error) {
	// One retention at a time: the periodic task and the disk check would
	// otherwise plan the same truncation and the second would find the
	// log already cut.
	s.retainMu.Lock()
	defer s.retainMu.Unlock()
	before := s.minPhys.Load()
	err := s.truncateAll(now)
	// Freed once for all its steps (and even after a failed one, for those
	// before it): each excise flushes the memtable holding the truncation.
	s.freeDeletedLocked()
	return s.minPhys.Load() - before, err
}

// truncateAll applies the OpTruncates retention calls for, one step after
// another.
func (s *Store) truncateAll(now time.Time) error {
	for {
		op, more, err := s.RetentionOp(now)
		if err != nil || op == nil {
			return err
		}
		if _, err := s.Apply(op); err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

// RetentionOp returns the next OpTruncate retention calls for as of now
// (nil if none), without applying it; more says that another will be due
// after it. A replicated store's leader proposes it (its encoding carries
// the cutoff, so the clock is read only here), with the background task
// off (RetentionInterval < 0).
func (s *Store) RetentionOp(now time.Time) (op *Op, more bool, err error) {
	if err := s.readLock(); err != nil {
		return nil, false, err
	}
	defer s.closeMu.RUnlock()
	return s.planTruncate(now)
}

// truncateStep caps the log bytes one OpTruncate deletes; a variable so
// tests can make retention take several steps.
var truncateStep int64 = 1 << 20 // 1 MiB: appends p99 during retention was 1.1-1.2 ms vs 1.3-1.7 ms at 4 MiB

// planTruncate builds the next OpTruncate (nil if nothing is due); more
// reports that it stopped at truncateStep short of what is due.
func (s *Store) planTruncate(now time.Time) (op *Op, more bool, err error) {
	lo, hi := s.minPhys.Load(), s.readablePhys.Load()
	cutoff := lo
	if s.opts.FileReservedTime > 0 {
		ts := now.Add(-s.opts.FileReservedTime).UnixMilli()
		c, err := commitlog.SearchTime(s.log, lo, hi, ts)
		if err != nil {
			return nil, false, fmt.Errorf("store: retention: %w", err)
		}
		cutoff = max(cutoff, c)
	}
	if b := s.opts.DiskBudget; b > 0 && hi-lo > b {
		t, ok, err := commitlog.SeekGE(s.log, hi-b)
		if err != nil {
			return nil, false, fmt.Errorf("store: retention: %w", err)
		}
		c := hi
		if ok && t.Phys < hi {
			c = t.Phys
		}
		cutoff = max(cutoff, c)
	}
	// Above diskSpaceCleanForciblyRatio the disk check chose the oldest
	// slice to go whatever its age, once for the check (see disk.go): not
	// recomputed here from the start of the log, which each step advances.
	if f := s.forceCut.Load(); f > lo && f < hi {
		cutoff = max(cutoff, f)
	}
	if cutoff <= lo {
		return nil, false, nil
	}
	if cutoff-lo > truncateStep {
		t, ok, err := commitlog.SeekGE(s.log, lo+truncateStep)
		if err != nil {
			return nil, false, fmt.Errorf("store: retention: %w", err)
		}
		if ok && t.Phys < cutoff {
			cutoff, more = t.Phys, true
		}
	}
	mins := make(map[QueueID]int64)
	for id, r := range s.Queues() {
		if r.Min >= r.Max {
			continue
		}
		m, err := consumequeue.SearchPhys(r.Min, r.Max, s.entryFunc(id), cutoff)
		if err != nil {
			return nil, false, fmt.Errorf("store: retention: %w", err)
		}
		if m > r.Min {
			mins[id] = m
		}
	}
	return &Op{Kind: OpTruncate, Cutoff: cutoff, QueueMins: mins}, more, nil
}

// buildTruncateLocked checks an OpTruncate against the current state and
// writes it. A hint is trusted only as far as it is provably right: the
// entry at the hinted minimum must point at or past the cutoff and the one
// before it below; otherwise (or with no hint) the queue is searched here.
func (s *Store) buildTruncateLocked(b, lb *pebble.Batch, op *Op, p *pending) error {
	cutoff := op.Cutoff
	minPhys := s.minPhys.Load()
	if cutoff <= minPhys {
		// Already done: two truncations planned from one state (or one
		// proposed twice) both ask for what the first made true. Every
		// replica sees the same start here, so all skip it alike.
		return nil
	}
	if cutoff > s.nextPhys {
		return fmt.Errorf("%w: truncate to %d, log ends at %d", ErrInvalidOp, cutoff, s.nextPhys)
	}
	if cutoff < s.nextPhys {
		if _, err := commitlog.Read(s.log, cutoff); errors.Is(err, commitlog.ErrNotFound) {
			return fmt.Errorf("%w: truncate to %d: not a record boundary", ErrInvalidOp, cutoff)
		} else if err != nil {
			return err
		}
	}
	segsUpTo, err := s.segmentsBelow(cutoff)
	if err != nil {
		return err
	}
	// Only the apply path adds or drops queues, and it holds applyMu, so
	// the snapshot stays exact while the batch is built.
	s.queuesMu.RLock()
	queues := make(map[QueueID]*queue, len(s.queues))
	for id, q := range s.queues {
		queues[id] = q
	}
	s.queuesMu.RUnlock()
	var cuts []queueOffset
	for id, q := range queues {
		min, next := q.min.Load(), q.next
		if min >= next {
			continue
		}
		newMin, err := s.queueCut(id, min, next, cutoff, op.QueueMins[id])
		if err != nil {
			return err
		}
		if newMin > min {
			cuts = append(cuts, queueOffset{id, q, newMin})
		}
	}

	// Nothing fails from here on. A checkpoint goes first: a queue's
	// entries that are only in memory and all below the cutoff would not
	// be replayed after a restart (their records are gone), so its end
	// would move back. The deletions come after it in the batch, so they
	// win over the chunks and the segment it writes.
	s.checkpointLocked(b, p, s.nextPhys)
	_ = lb.DeleteRange(commitlog.Key(minPhys), commitlog.Key(cutoff), nil)
	if g := p.sealed; g != nil && g.Dir.End <= cutoff {
		segsUpTo = g.Start + 1
	}
	if segsUpTo > 0 {
		index.DeleteSegments(b, 0, segsUpTo)
	}
	_ = b.Set(minPhysKey, meta.EncodeInt64(cutoff), nil)
	p.newMinPhys = cutoff
	for _, c := range cuts {
		// Chunks wholly below the new minimum go; the one holding it
		// stays, and the floor says where the queue starts.
		lo := consumequeue.Key(c.id.Topic, c.id.ID, c.q.min.Load())
		hi := consumequeue.Key(c.id.Topic, c.id.ID, c.off)
		_ = b.DeleteRange(lo, hi, nil)
		_ = b.Set(consumequeue.FloorKey(c.id.Topic, c.id.ID), meta.EncodeInt64(c.off), nil)
		p.queueMin = append(p.queueMin, c)
	}
	return nil
}

// segmentsBelow returns the bound below which index segments in Pebble
// start and lie wholly below cutoff (0 if none do).
func (s *Store) segmentsBelow(cutoff int64) (int64, error) {
	var upTo int64
	err := index.Segments(s.db, func(start int64, d index.Dir) (bool, error) {
		if d.End > cutoff {
			return false, nil
		}
		upTo = start + 1
		return true, nil
	})
	return upTo, err
}

// queueCut returns the first offset in [min, next) whose entry points at or
// past cutoff (next if none).
func (s *Store) queueCut(id QueueID, min, next, cutoff, hint int64) (int64, error) {
	get := s.entryFunc(id)
	ok := func(off int64) (bool, error) { // entry off points at or past cutoff
		e, found, err := get(off)
		if err != nil || !found {
			return false, err
		}
		return e.PhysOffset >= cutoff, nil
	}
	if hint > min && hint < next {
		atHint, err := ok(hint)
		if err != nil {
			return 0, err
		}
		before, err := ok(hint - 1)
		if err != nil {
			return 0, err
		}
		if atHint && !before {
			return hint, nil
		}
	}
	return consumequeue.SearchPhys(min, next, get, cutoff)
}

// Freeing what retention deleted.
//
// A truncation deletes the log with a range tombstone (in the same batch as
// the rest of it, so it is atomic, replayed after a crash and the same on
// every replica), which frees nothing by itself. Left to Pebble's
// compactions, the space came back late, and the compaction it took
// rewrote the live log: the tombstone reaches a table at the memtable's
// next flush, together with the appends made meanwhile, so that table
// spans from the deleted start to the newest record and overlaps every
// table of the live log, all of which its compaction rewrites (16 MiB of a
// 32 MiB log cut in half: 17 MiB compacted, the log's tables at 53 MiB
// meanwhile; TestRetentionFreesAtOnce). So every truncation is freed by
// freeLog, the one path, as soon as it is durable: by Retain before it
// returns, by the freer for truncations applied otherwise (a replica's,
// proposed by its leader), by the disk check before it reads the usage
// again, and by Open for what a crash or a close left unfreed.

// freeDeletedLocked frees the log deleted by durable truncations since the
// last call, [freedTo, deletedTo). retainMu must be held. A failed store
// frees nothing: an excise rotates the WAL, which Pebble cannot do after a
// failed write.
func (s *Store) freeDeletedLocked() {
	lo, hi := s.freedTo, s.deletedTo.Load()
	if hi <= lo || s.failed.Load() != nil {
		return
	}
	s.freeLog(lo, hi)
	s.freedTo = hi
}

// logDeleted is told by the apply path that a truncation to cutoff is
// durable: the freer frees it, unless Retain (which frees its own) or the
// disk check gets there first.
func (s *Store) logDeleted(cutoff int64) {
	raise(&s.deletedTo, cutoff)
	select {
	case s.freeKick <- struct{}{}:
	default: // a wake-up is pending; it frees this one too
	}
}

// freer frees what truncations deleted as they come (see logDeleted), until
// Close. A replica's truncations come one truncateStep at a time, in quick
// succession; a wake-up frees all that is durable by then, so a batch of
// them costs one excise or a few, not one each.
func (s *Store) freer() {
	for {
		select {
		case <-s.stop:
			return
		case <-s.freeKick:
			s.retainMu.Lock()
			s.freeDeletedLocked()
			s.retainMu.Unlock()
		}
	}
}

// freeLog frees the log's keys in [lo, hi), which a truncation just
// deleted, so that the space comes back now. It gives up when the store
// closes.
//
// It excises the range: Pebble drops the tables wholly in it and narrows
// the rest to what lies outside, writing nothing, as RocketMQ deletes
// whole old files. The table holding both sides of hi keeps its file until
// a later truncation takes the rest of it (at most a memtable's flush: the
// log's keys only grow, so its tables are flushes moved down whole).
// Compacting the range instead (what forced cleaning did first) took in
// the table the truncation's range deletion was flushed to, which also
// held the appends made with it, so spanned from lo to the newest record:
// that compaction rewrote the whole live log, twice its size on disk
// meanwhile (TestDiskModel: 11.6 MiB of tables, 22.1 MiB during it, on a
// 16 MiB disk), and left it in a few large tables. Excised, that table
// keeps only its appends. The excise flushes the memtable holding the
// truncation (Pebble queues it behind that memtable), so it is done once
// for a run of truncations, not for each.
func (s *Store) freeLog(lo, hi int64) {
	if err := s.readLock(); err != nil {
		return
	}
	defer s.closeMu.RUnlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	span := pebble.KeyRange{Start: commitlog.Key(lo), End: commitlog.Key(hi)}
	if err := s.log.Excise(ctx, span); err != nil && ctx.Err() == nil {
		s.opts.Logger.Errorf("store: freeing the deleted log [%d, %d): %v", lo, hi, err)
	}
}
