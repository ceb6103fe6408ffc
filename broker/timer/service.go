package timer

import (
	"encoding/binary"
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
	Get(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter store.Filter) (*store.GetResult, error)
	QueryByUniqKey(topic, uniqKey string, maxNum int) ([][]byte, error)
	PutCheckpoint(name string, value []byte) error
	Checkpoint(name string) ([]byte, bool, error)
}

// Config configures a Service.
type Config struct {
	// Store holds the timer topic and the progress. Required.
	Store Store
	// Deliver stores due messages in their real queues, all in one atomic
	// write, and returns once they are durable. Required.
	Deliver func(msgs []*message.MessageExt) error
	// Now is the clock due times are compared with. Default time.Now.
	Now func() time.Time
	// Logger. Default: discard.
	Logger *slog.Logger
	// BatchSize is the most messages delivered in one write. Default 256.
	BatchSize int
	// RetryInterval is how long the loop waits after a failed step.
	// Default 1 s.
	RetryInterval time.Duration
	// IdleInterval is the longest the loop sleeps without a Notify, so a
	// timer whose arrival was not notified is still indexed. Default 1 s.
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
		c.BatchSize = 256
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = time.Second
	}
	if c.IdleInterval <= 0 {
		c.IdleInterval = time.Second
	}
}

// ErrBadConfig is returned (wrapped) by New for a missing required field.
var ErrBadConfig = errors.New("timer: bad config")

// checkpointName names the progress checkpoint in the store.
const checkpointName = "timer"

// resumeSlack is how far before the cursor timers are re-checked on start
// rather than taken as delivered (see the package doc).
const resumeSlack = 10 * time.Second

// resumeScan bounds how many same-key copies one resume check reads.
const resumeScan = 1024

// Service delivers due timer messages. Step does the work; Start runs it
// in one goroutine until Close.
type Service struct {
	cfg Config

	// stepMu serialises Step; it guards the fields below.
	stepMu sync.Mutex
	w      waiting
	// next is the next timer-queue offset to index.
	next int64
	// cursor is the due time of the last delivered timer; saved the cursor
	// last checkpointed; resumeBelow the due time below which timers found
	// on start are taken as delivered.
	cursor, saved, resumeBelow int64
	// resuming is true until the first index pass after New has reached
	// the end of the timer queue; caughtUp is true while the index has
	// reached the end of the timer queue at the last index pass.
	resuming, caughtUp bool
	// used are delivered copies matched to a timer while checking.
	used map[int64]bool

	// loop runs Step until Close.
	loop *dueloop.Loop
}

// New returns a Service that resumes from the progress recorded in the
// store. Nothing runs until Start (or Step).
func New(cfg Config) (*Service, error) {
	cfg.ensureDefaults()
	switch {
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: no store", ErrBadConfig)
	case cfg.Deliver == nil:
		return nil, fmt.Errorf("%w: no Deliver", ErrBadConfig)
	}
	s := &Service{
		cfg:      cfg,
		resuming: true,
	}
	s.loop = dueloop.New(dueloop.Config{Name: "timer", Step: s.Step, Now: cfg.Now,
		IdleInterval: cfg.IdleInterval, RetryInterval: cfg.RetryInterval, Logger: cfg.Logger})
	v, ok, err := cfg.Store.Checkpoint(checkpointName)
	if err != nil {
		return nil, fmt.Errorf("timer: read progress: %w", err)
	}
	if ok {
		if len(v) != 16 {
			return nil, fmt.Errorf("timer: progress checkpoint of %d bytes, want 16", len(v))
		}
		s.next = int64(binary.BigEndian.Uint64(v))
		s.cursor = int64(binary.BigEndian.Uint64(v[8:]))
		s.saved = s.cursor
		s.resumeBelow = s.cursor - resumeSlack.Milliseconds()
	}
	return s, nil
}

// Waiting returns how many timers wait (for tests and tools).
func (s *Service) Waiting() int {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	return s.w.len()
}

// Notify tells the loop a message arrived in the timer topic. It never
// blocks.
func (s *Service) Notify() { s.loop.Notify() }

// Step indexes up to indexChunk timers stored since the last Step,
// delivers every indexed one due at Now, and returns when the earliest
// waiting one falls due (the zero time when none waits; Now when more
// remain to index).
func (s *Service) Step() (time.Time, error) {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	if err := s.indexLocked(); err != nil {
		return time.Time{}, err
	}
	for {
		now := s.cfg.Now().UnixMilli()
		it, ok := s.w.peek()
		if !ok || it.due > now {
			switch {
			case !s.caughtUp:
				return s.cfg.Now(), nil
			case !ok:
				return time.Time{}, nil
			}
			return time.UnixMilli(it.due), nil
		}
		if err := s.deliverLocked(now); err != nil {
			return time.Time{}, err
		}
	}
}

// indexChunk bounds the timers one Step indexes, so a long re-index after
// a restart delivers what falls due meanwhile.
const indexChunk = 8192

// indexLocked reads the timer queue from next on, up to indexChunk
// entries, into the index.
func (s *Service) indexLocked() error {
	now := s.cfg.Now().UnixMilli()
	end := s.cfg.Store.MaxOffset(Topic, 0)
	off := max(s.next, s.cfg.Store.MinOffset(Topic, 0))
	stop := min(end, off+indexChunk)
	for off < stop {
		// Get reads records in log order with one iterator, far cheaper
		// than a queue lookup and a record lookup per timer.
		res, err := s.cfg.Store.Get(Topic, 0, off, int(min(stop-off, 32)), 0, nil)
		if err != nil {
			s.next = off
			return fmt.Errorf("timer: index offset %d: %w", off, err)
		}
		if res.Count == 0 {
			if res.NextBeginOffset > off { // removed by retention meanwhile
				off = res.NextBeginOffset
				continue
			}
			if err := s.indexOneLocked(off, now); err != nil {
				s.next = off
				return err
			}
			off++
			continue
		}
		ms, err := message.DecodeMessagesRaw(res.Messages)
		if err != nil { // an undecodable record among them: one by one
			for _, o := range res.QueueOffsets {
				if err := s.indexOneLocked(o, now); err != nil {
					s.next = o
					return err
				}
			}
		} else {
			for i, m := range ms {
				s.addLocked(m, res.QueueOffsets[i], now)
			}
		}
		off = res.NextBeginOffset
	}
	s.next = off
	s.caughtUp = off >= end
	if s.caughtUp {
		s.resuming = false
	}
	return nil
}

// indexOneLocked indexes the timer at one queue offset.
func (s *Service) indexOneLocked(off, now int64) error {
	e, err := s.cfg.Store.QueueEntry(Topic, 0, off)
	if errors.Is(err, store.ErrNotFound) {
		return nil // removed by retention meanwhile
	}
	if err != nil {
		return fmt.Errorf("timer: index offset %d: %w", off, err)
	}
	m, err := s.read(e.PhysOffset)
	if err != nil || m == nil {
		return err
	}
	s.addLocked(m, off, now)
	return nil
}

// addLocked indexes timer message m at queue offset off, unless it was
// delivered before a restart.
func (s *Service) addLocked(m *message.MessageExt, off, now int64) {
	due, err := dueOf(m)
	if err != nil {
		s.cfg.Logger.Error("timer: message without a due time, skipped", "offset", off, "err", err)
		return
	}
	it := item{due: due, off: off}
	if s.resuming {
		if due < s.resumeBelow {
			return // delivered before the restart
		}
		it.check = due <= now
	}
	s.w.add(it)
}

// read returns the stored message at phys, nil when there is none to
// deliver (removed by retention, or undecodable: logged).
func (s *Service) read(phys int64) (*message.MessageExt, error) {
	rec, err := s.cfg.Store.ReadRecord(phys)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("timer: read %d: %w", phys, err)
	}
	m, _, err := message.DecodeStoredMessage(rec, false)
	if err != nil {
		s.cfg.Logger.Error("timer: undecodable record in the timer topic, skipped", "offset", phys, "err", err)
		return nil, nil
	}
	return m, nil
}

// deliverLocked delivers one batch of the timers due at now and records
// the progress.
func (s *Service) deliverLocked(now int64) error {
	var popped []item
	var batch []*message.MessageExt
	fail := func(err error) error {
		for _, it := range popped {
			s.w.unpop(it)
		}
		return err
	}
	for len(batch) < s.cfg.BatchSize {
		it, ok := s.w.peek()
		if !ok || it.due > now {
			break
		}
		popped = append(popped, s.w.pop())
		e, err := s.cfg.Store.QueueEntry(Topic, 0, it.off)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed by retention
		}
		if err != nil {
			return fail(fmt.Errorf("timer: offset %d: %w", it.off, err))
		}
		m, err := s.read(e.PhysOffset)
		if err != nil {
			return fail(err)
		}
		if m == nil {
			continue
		}
		out, err := Restore(m)
		if err != nil {
			s.cfg.Logger.Error("timer: message without a real topic, skipped", "err", err)
			continue
		}
		if it.check {
			done, err := s.deliveredLocked(m, out)
			if err != nil {
				return fail(err)
			}
			if done {
				s.cfg.Logger.Info("timer: already delivered before a restart, skipped", "uniqKey", out.UniqKey())
				continue
			}
		}
		batch = append(batch, out)
	}
	if len(batch) > 0 {
		if err := s.cfg.Deliver(batch); err != nil {
			return fail(fmt.Errorf("timer: deliver: %w", err))
		}
	}
	if n := len(popped); n > 0 {
		s.cursor = max(s.cursor, popped[n-1].due)
	}
	// The cursor is saved only while the index is complete: a timer not
	// yet indexed may be due before it, and must not be taken as
	// delivered after a crash (see the package doc).
	if s.caughtUp && !s.resuming {
		s.saved = s.cursor
	}
	var v [16]byte
	binary.BigEndian.PutUint64(v[:], uint64(s.w.watermark(s.next)))
	binary.BigEndian.PutUint64(v[8:], uint64(s.saved))
	// After the append: a crash in between is undone by the resume check.
	if err := s.cfg.Store.PutCheckpoint(checkpointName, v[:]); err != nil {
		return fmt.Errorf("timer: progress: %w", err)
	}
	return nil
}

// deliveredLocked reports whether timer message m already has a delivered
// copy in its real queue: same UNIQ_KEY and queue, stored after m, and
// not yet matched to another timer.
func (s *Service) deliveredLocked(m, out *message.MessageExt) (bool, error) {
	key := out.UniqKey()
	if key == "" {
		return false, nil
	}
	recs, err := s.cfg.Store.QueryByUniqKey(out.Topic, key, resumeScan)
	if err != nil {
		return false, fmt.Errorf("timer: resume check: %w", err)
	}
	for _, r := range recs {
		d, _, err := message.DecodeStoredMessage(r, false)
		if err != nil || d.QueueID != out.QueueID || d.CommitLogOffset <= m.CommitLogOffset || s.used[d.CommitLogOffset] {
			continue
		}
		if s.used == nil {
			s.used = make(map[int64]bool)
		}
		s.used[d.CommitLogOffset] = true
		return true, nil
	}
	return false, nil
}
