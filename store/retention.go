package store

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/meta"
)

// Retain runs one retention pass as of now: it deletes the commit log below
// the first record younger than FileReservedTime, and further while the log
// is larger than DiskBudget, with the queue entries that point there. It
// returns the number of log bytes deleted.
//
// The cutoff and each queue's new minimum are searched outside the apply
// lock (binary searches, a few reads per queue); the OpTruncate itself is a
// handful of range deletions, so writers wait only for that batch.
func (s *Store) Retain(now time.Time) (int64, error) {
	if err := s.readLock(); err != nil {
		return 0, err
	}
	op, err := s.planTruncate(now)
	s.closeMu.RUnlock()
	if err != nil || op == nil {
		return 0, err
	}
	before := s.minPhys.Load()
	if _, err := s.Apply(op); err != nil {
		return 0, err
	}
	return s.minPhys.Load() - before, nil
}

func (s *Store) planTruncate(now time.Time) (*Op, error) {
	lo, hi := s.minPhys.Load(), s.readablePhys.Load()
	cutoff := lo
	if s.opts.FileReservedTime > 0 {
		ts := now.Add(-s.opts.FileReservedTime).UnixMilli()
		c, err := commitlog.SearchTime(s.db, lo, hi, ts)
		if err != nil {
			return nil, fmt.Errorf("store: retention: %w", err)
		}
		cutoff = max(cutoff, c)
	}
	if b := s.opts.DiskBudget; b > 0 && hi-lo > b {
		t, ok, err := commitlog.SeekGE(s.db, hi-b)
		if err != nil {
			return nil, fmt.Errorf("store: retention: %w", err)
		}
		c := hi
		if ok && t.Phys < hi {
			c = t.Phys
		}
		cutoff = max(cutoff, c)
	}
	if cutoff <= lo {
		return nil, nil
	}
	mins := make(map[QueueID]int64)
	for id, r := range s.Queues() {
		if r.Min >= r.Max {
			continue
		}
		m, err := consumequeue.SearchPhys(s.db, id.Topic, id.ID, r.Min, r.Max, cutoff)
		if err != nil {
			return nil, fmt.Errorf("store: retention: %w", err)
		}
		if m > r.Min {
			mins[id] = m
		}
	}
	return &Op{Kind: OpTruncate, Cutoff: cutoff, QueueMins: mins}, nil
}

// buildTruncateLocked checks an OpTruncate against the current state and
// writes it. A hint is trusted only as far as it is provably right: the
// entry at the hinted minimum must point at or past the cutoff and the one
// before it below; otherwise (or with no hint) the queue is searched here.
func (s *Store) buildTruncateLocked(b *pebble.Batch, op *Op, p *pending) error {
	cutoff := op.Cutoff
	minPhys := s.minPhys.Load()
	if cutoff <= minPhys {
		return fmt.Errorf("%w: truncate to %d, log starts at %d", ErrInvalidOp, cutoff, minPhys)
	}
	if cutoff > s.nextPhys {
		return fmt.Errorf("%w: truncate to %d, log ends at %d", ErrInvalidOp, cutoff, s.nextPhys)
	}
	if cutoff < s.nextPhys {
		if _, ok, err := commitlog.SeekGE(s.db, cutoff); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("%w: truncate to %d: no record there", ErrInvalidOp, cutoff)
		}
		if _, err := commitlog.Read(s.db, cutoff); err != nil {
			return fmt.Errorf("%w: truncate to %d: not a record boundary", ErrInvalidOp, cutoff)
		}
	}
	_ = b.DeleteRange(commitlog.Key(minPhys), commitlog.Key(cutoff), nil)
	_ = b.Set(minPhysKey, meta.EncodeInt64(cutoff), nil)
	p.newMinPhys = cutoff
	p.queueMin = make(map[QueueID]int64)

	s.queuesMu.RLock()
	ids := make([]QueueID, 0, len(s.queues))
	for id := range s.queues {
		ids = append(ids, id)
	}
	s.queuesMu.RUnlock()
	for _, id := range ids {
		q := s.queue(id.Topic, id.ID)
		min, next := q.min.Load(), q.next
		if min >= next {
			continue
		}
		newMin, err := s.queueCut(id, min, next, cutoff, op.QueueMins[id])
		if err != nil {
			return err
		}
		if newMin <= min {
			continue
		}
		lo := consumequeue.Key(id.Topic, id.ID, min)
		hi := consumequeue.Key(id.Topic, id.ID, newMin)
		_ = b.DeleteRange(lo, hi, nil)
		_ = b.Set(consumequeue.FloorKey(id.Topic, id.ID), meta.EncodeInt64(newMin), nil)
		p.queueMin[id] = newMin
	}
	return nil
}

// queueCut returns the first offset in [min, next) whose entry points at or
// past cutoff (next if none).
func (s *Store) queueCut(id QueueID, min, next, cutoff, hint int64) (int64, error) {
	ok := func(off int64) (bool, error) { // entry off points at or past cutoff
		e, found, err := consumequeue.Get(s.db, id.Topic, id.ID, off)
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
	return consumequeue.SearchPhys(s.db, id.Topic, id.ID, min, next, cutoff)
}
