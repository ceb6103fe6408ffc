package schedule

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/runnelmq/runnel/broker/dueloop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// Store is the part of the message store a Service reads and writes;
// *store.Store implements it.
type Store interface {
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	QueueEntry(topic string, queueID int32, offset int64) (consumequeue.Entry, error)
	ReadRecord(phys int64) ([]byte, error)
	QueryByUniqKey(topic, uniqKey string, maxNum int) ([][]byte, error)
	DelayOffsets() (map[int32]int64, error)
	SetDelayOffset(level int32, offset int64) error
}

// Config configures a Service.
type Config struct {
	// Levels are the delay levels. Required.
	Levels Levels
	// Store holds the schedule topic and the progress. Required.
	Store Store
	// Deliver stores due messages in their real queues, all in one atomic
	// write, and returns once they are durable as the store acknowledges
	// writes. Required.
	Deliver func(msgs []*message.MessageExt) error
	// Now is the clock due times are compared with; it must be the clock
	// the store stamps messages with. Default time.Now.
	Now func() time.Time
	// Logger. Default: discard.
	Logger *slog.Logger
	// BatchSize is the most messages of one level delivered in one write.
	// Default 32.
	BatchSize int
	// RetryInterval is how long the loop waits after a failed delivery.
	// Default 1 s.
	RetryInterval time.Duration
	// IdleInterval is the longest the loop sleeps without a Notify, so a
	// message whose arrival was not notified still goes out. Default 1 s.
	IdleInterval time.Duration
}

func (c *Config) ensureDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 32
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = time.Second
	}
	if c.IdleInterval <= 0 {
		c.IdleInterval = time.Second
	}
}

// ErrBadConfig is returned (wrapped) by New for a missing required field.
var ErrBadConfig = errors.New("schedule: bad config")

// resumeScan bounds how many same-key copies one resume check reads.
const resumeScan = 1024

// Service delivers due scheduled messages. Step does the work; Start runs
// Step in one goroutine until Close.
type Service struct {
	cfg Config

	// stepMu serialises Step (the loop, or a test driving it by hand).
	stepMu sync.Mutex
	// level i (0-based) state, guarded by stepMu.
	next []int64 // next queue offset to deliver
	// checking is true until the level's first entry not already
	// delivered has been seen after start (see the package doc).
	checking []bool
	// used are delivered copies (commit log offsets) already matched to
	// an entry during checking.
	used []map[int64]bool

	// loop runs Step until Close.
	loop *dueloop.Loop
}

// New returns a Service that resumes from the progress recorded in the
// store. Nothing runs until Start (or Step).
func New(cfg Config) (*Service, error) {
	cfg.ensureDefaults()
	switch {
	case len(cfg.Levels) == 0:
		return nil, fmt.Errorf("%w: no levels", ErrBadConfig)
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: no store", ErrBadConfig)
	case cfg.Deliver == nil:
		return nil, fmt.Errorf("%w: no Deliver", ErrBadConfig)
	}
	offs, err := cfg.Store.DelayOffsets()
	if err != nil {
		return nil, fmt.Errorf("schedule: read progress: %w", err)
	}
	n := len(cfg.Levels)
	s := &Service{
		cfg:      cfg,
		next:     make([]int64, n),
		checking: make([]bool, n),
		used:     make([]map[int64]bool, n),
	}
	s.loop = dueloop.New(dueloop.Config{Name: "schedule", Step: s.Step, Now: cfg.Now,
		IdleInterval: cfg.IdleInterval, RetryInterval: cfg.RetryInterval, Logger: cfg.Logger})
	for i := range n {
		s.next[i] = offs[int32(i+1)]
		s.checking[i] = true
	}
	return s, nil
}

// Progress returns each level's next undelivered queue offset (levels are
// 1-based), as Step last left them.
func (s *Service) Progress() map[int32]int64 {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	out := make(map[int32]int64, len(s.next))
	for i, o := range s.next {
		out[int32(i+1)] = o
	}
	return out
}

// Notify tells the loop a message arrived in the schedule topic, so it
// recomputes when to wake. It never blocks.
func (s *Service) Notify() { s.loop.Notify() }

// Step delivers every message due at Now and returns when the earliest
// pending one falls due (the zero time when none is pending). On a store
// error it delivers what it can and returns the first error; the failed
// level is retried by the next Step.
func (s *Service) Step() (time.Time, error) {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	var next time.Time
	var firstErr error
	for i := range s.next {
		due, err := s.stepLevelLocked(i)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next, firstErr
}

// stepLevelLocked delivers level i's due messages, batch by batch, and
// returns the due time of the first one left.
func (s *Service) stepLevelLocked(i int) (time.Time, error) {
	qid := int32(i)
	delay := s.cfg.Levels[i]
	for {
		now := s.cfg.Now()
		off := max(s.next[i], s.cfg.Store.MinOffset(Topic, qid))
		end := s.cfg.Store.MaxOffset(Topic, qid)
		var batch []*message.MessageExt
		var nextDue time.Time
		for off < end && len(batch) < s.cfg.BatchSize {
			e, err := s.cfg.Store.QueueEntry(Topic, qid, off)
			if errors.Is(err, store.ErrNotFound) {
				// Removed by retention meanwhile: go on from the new minimum.
				if m := s.cfg.Store.MinOffset(Topic, qid); m > off {
					off = m
					continue
				}
			}
			if err != nil {
				return time.Time{}, fmt.Errorf("schedule: level %d offset %d: %w", i+1, off, err)
			}
			due := time.UnixMilli(e.StoreTimestamp).Add(delay)
			if due.After(now) {
				nextDue = due
				break
			}
			out, skip, err := s.prepareLocked(i, e)
			if err != nil {
				return time.Time{}, err
			}
			off++
			if !skip {
				batch = append(batch, out)
			}
		}
		if len(batch) > 0 {
			if err := s.cfg.Deliver(batch); err != nil {
				return now.Add(s.cfg.RetryInterval), fmt.Errorf("schedule: level %d deliver: %w", i+1, err)
			}
		}
		if off != s.next[i] {
			s.next[i] = off
			// Progress after the append: a crash in between is undone by the
			// resume check, never by delivering twice.
			if err := s.cfg.Store.SetDelayOffset(int32(i+1), off); err != nil {
				return now.Add(s.cfg.RetryInterval), fmt.Errorf("schedule: level %d progress: %w", i+1, err)
			}
		}
		if off >= end || !nextDue.IsZero() {
			return nextDue, nil
		}
	}
}

// prepareLocked reads a due entry and returns the message to deliver, or
// skip when there is nothing to deliver: the record is not a scheduled
// message (logged), or, while checking, its copy is already delivered.
func (s *Service) prepareLocked(i int, e consumequeue.Entry) (*message.MessageExt, bool, error) {
	rec, err := s.cfg.Store.ReadRecord(e.PhysOffset)
	if errors.Is(err, store.ErrNotFound) {
		return nil, true, nil // removed by retention
	}
	if err != nil {
		return nil, false, fmt.Errorf("schedule: level %d read %d: %w", i+1, e.PhysOffset, err)
	}
	m, _, err := message.DecodeStoredMessage(rec, false)
	if err != nil {
		s.cfg.Logger.Error("schedule: undecodable record in the schedule topic, skipped", "level", i+1, "offset", e.PhysOffset, "err", err)
		return nil, true, nil
	}
	out, err := Restore(m)
	if err != nil {
		s.cfg.Logger.Error("schedule: message without a real topic, skipped", "level", i+1, "err", err)
		return nil, true, nil
	}
	if s.checking[i] {
		done, err := s.deliveredLocked(i, m, out)
		if err != nil {
			return nil, false, err
		}
		if done {
			s.cfg.Logger.Info("schedule: already delivered before a restart, skipped", "level", i+1, "uniqKey", out.UniqKey())
			return nil, true, nil
		}
		s.checking[i] = false
		s.used[i] = nil
	}
	return out, false, nil
}

// deliveredLocked reports whether the scheduled message m already has a
// delivered copy out in its real queue: same UNIQ_KEY and queue, stored
// after m, and not yet matched to another entry.
func (s *Service) deliveredLocked(i int, m, out *message.MessageExt) (bool, error) {
	key := out.UniqKey()
	if key == "" {
		return false, nil
	}
	recs, err := s.cfg.Store.QueryByUniqKey(out.Topic, key, resumeScan)
	if err != nil {
		return false, fmt.Errorf("schedule: level %d resume check: %w", i+1, err)
	}
	for _, r := range recs {
		d, _, err := message.DecodeStoredMessage(r, false)
		if err != nil || d.QueueID != out.QueueID || d.CommitLogOffset <= m.CommitLogOffset || s.used[i][d.CommitLogOffset] {
			continue
		}
		if s.used[i] == nil {
			s.used[i] = make(map[int64]bool)
		}
		s.used[i][d.CommitLogOffset] = true
		return true, nil
	}
	return false, nil
}
