package due

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/runnelmq/runnel/message"
)

// Config configures a Service.
type Config struct {
	// Store holds the checkpoint. Required.
	Store Checkpoints
	// Sources feed the index: NewDelaySource, NewTimerSource, and POP's
	// tomorrow. At least one; their names are distinct.
	Sources []Source
	// Deliver stores the messages of due entries, all in one atomic
	// write, and returns once they are durable as the store acknowledges
	// writes. Required.
	Deliver func(msgs []*message.MessageExt) error
	// Now is the clock due times are compared with; it must be the clock
	// the store stamps messages with. Default time.Now.
	Now func() time.Time
	// Logger. Default: discard.
	Logger *slog.Logger
	// BatchSize is the most messages delivered in one write. Default 256.
	BatchSize int
	// RetryInterval is how long the loop waits after a failed step.
	// Default 1 s.
	RetryInterval time.Duration
	// IdleInterval is the longest the loop sleeps without a Notify, so an
	// entry whose arrival was not notified still goes out. Default 1 s.
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

// ErrBadConfig is returned (wrapped) by New for a missing or bad field.
var ErrBadConfig = errors.New("due: bad config")

// scanBudget bounds the records one Step reads of a source's lane, so a
// long re-read after a restart delivers what falls due meanwhile, and the
// index takes in a long backlog of due delayed messages a chunk a Step.
const scanBudget = 8192

// Service delivers what falls due. Step does the work; Start runs it in
// one goroutine until Close.
type Service struct {
	cfg  Config
	srcs []Source

	// mu serialises Step (the loop, or a test driving it by hand); it
	// guards the fields below.
	mu  sync.Mutex
	idx dueIndex
	// kept are checkpoint sections of no configured source, written back
	// as they were (a source switched off loses no progress).
	kept []section
	// saved is the checkpoint record last written, or what New resumed.
	saved []byte

	loop *loop
}

// New returns a Service whose sources resume from the checkpoint record
// (or, in a store written before it, from what older versions stored:
// legacy.go). Nothing runs until Start (or Step).
func New(cfg Config) (*Service, error) {
	cfg.ensureDefaults()
	switch {
	case cfg.Store == nil:
		return nil, fmt.Errorf("%w: no store", ErrBadConfig)
	case cfg.Deliver == nil:
		return nil, fmt.Errorf("%w: no Deliver", ErrBadConfig)
	case len(cfg.Sources) == 0 || len(cfg.Sources) > math.MaxUint16:
		return nil, fmt.Errorf("%w: %d sources", ErrBadConfig, len(cfg.Sources))
	}
	names := make(map[string]bool, len(cfg.Sources))
	for _, src := range cfg.Sources {
		if n := src.Name(); n == "" || names[n] {
			return nil, fmt.Errorf("%w: source name %q empty or twice", ErrBadConfig, n)
		}
		names[src.Name()] = true
	}
	s := &Service{cfg: cfg, srcs: cfg.Sources}
	s.loop = newLoop(s.Step, &s.cfg)
	v, ok, err := cfg.Store.Checkpoint(CheckpointName)
	if err != nil {
		return nil, fmt.Errorf("due: read progress: %w", err)
	}
	state := make(map[string][]byte)
	if ok {
		secs, err := decodeCheckpoint(v)
		if err != nil {
			return nil, err
		}
		for _, sec := range secs {
			if names[sec.name] {
				state[sec.name] = sec.state
			} else {
				s.kept = append(s.kept, sec)
			}
		}
	}
	for _, src := range s.srcs {
		if err := src.Resume(state[src.Name()]); err != nil {
			return nil, fmt.Errorf("due: %s: %w", src.Name(), err)
		}
	}
	// What was resumed counts as saved: the record is written when the
	// progress moves, not at every start (in a store of an older version,
	// the old records stay the progress until then).
	s.saved = s.encodeLocked()
	return s, nil
}

// Waiting returns how many entries the index holds (for tests and tools).
func (s *Service) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idx)
}

// Step reads what the sources stored since the last Step (a bounded
// number of records each), delivers every indexed entry due at Now, saves
// the progress, and returns when the earliest waiting entry falls due: the
// zero time when none waits, Now when more remain to read. On an error it
// returns when to try again; what failed is retried by the next Step.
func (s *Service) Step() (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	more := false
	var scanErr error
	for i, src := range s.srcs {
		done, err := src.Scan(func(e Entry) { s.idx.add(itemOf(e, i)) }, now.UnixMilli(), scanBudget)
		if err != nil && scanErr == nil {
			scanErr = fmt.Errorf("due: %s: %w", src.Name(), err)
		}
		more = more || !done
	}
	for {
		now = s.cfg.Now()
		it, ok := s.idx.peek()
		if !ok || it.due > now.UnixMilli() {
			break
		}
		if err := s.fireLocked(now.UnixMilli()); err != nil {
			return now.Add(s.cfg.RetryInterval), err
		}
	}
	// Progress that moved without a delivery (entries skipped, a failed
	// write of the last batch's) is saved too.
	if err := s.saveLocked(); err != nil {
		return now.Add(s.cfg.RetryInterval), err
	}
	if scanErr != nil {
		return now.Add(s.cfg.RetryInterval), scanErr
	}
	if more {
		return now, nil
	}
	if it, ok := s.idx.peek(); ok {
		return time.UnixMilli(it.due), nil
	}
	return time.Time{}, nil
}

// fireLocked delivers one batch of the entries due at now, in due order,
// and saves the progress after the write.
func (s *Service) fireLocked(now int64) error {
	var popped []item
	var batch []*message.MessageExt
	fail := func(err error) error {
		for _, it := range popped {
			s.idx.add(it)
		}
		return err
	}
	for len(batch) < s.cfg.BatchSize {
		it, ok := s.idx.peek()
		if !ok || it.due > now {
			break
		}
		popped = append(popped, s.idx.pop())
		src := s.srcs[it.src]
		m, err := src.Fire(it.entry())
		if err != nil {
			return fail(fmt.Errorf("due: %s: %w", src.Name(), err))
		}
		if m != nil {
			batch = append(batch, m)
		}
	}
	if len(batch) > 0 {
		if err := s.cfg.Deliver(batch); err != nil {
			return fail(fmt.Errorf("due: deliver: %w", err))
		}
	}
	for _, it := range popped {
		s.srcs[it.src].Fired(it.entry())
	}
	// After the write: a crash in between is undone by the resume check,
	// never by delivering twice.
	return s.saveLocked()
}

// saveLocked writes the checkpoint record if the progress changed.
func (s *Service) saveLocked() error {
	v := s.encodeLocked()
	if bytes.Equal(v, s.saved) {
		return nil
	}
	if err := s.cfg.Store.PutCheckpoint(CheckpointName, v); err != nil {
		return fmt.Errorf("due: progress: %w", err)
	}
	s.saved = v
	return nil
}

// encodeLocked returns the checkpoint record of the progress now.
func (s *Service) encodeLocked() []byte {
	secs := make([]section, 0, len(s.srcs)+len(s.kept))
	for _, src := range s.srcs {
		secs = append(secs, section{name: src.Name(), state: src.Progress(nil)})
	}
	return appendCheckpoint(nil, append(secs, s.kept...))
}
