package due

import (
	"errors"
	"sync"
	"time"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("due: closed")

// loop is the Service's one goroutine: it runs Step, then sleeps until
// the earliest due time Step returned, a Notify, or the idle interval,
// whichever comes first, and after a failed Step retries sooner. At most
// one Step runs at a time from it; Close stops it and waits for a Step in
// progress; Start after Close fails.
type loop struct {
	step func() (time.Time, error)
	cfg  *Config

	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		started, closed bool
	}
}

func newLoop(step func() (time.Time, error), cfg *Config) *loop {
	return &loop{step: step, cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Start runs the loop in one goroutine until Close.
func (s *Service) Start() error {
	l := s.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.mu.closed:
		return ErrClosed
	case l.mu.started:
		return errors.New("due: already started")
	}
	l.mu.started = true
	go l.run()
	return nil
}

// Notify makes the loop step now (an entry arrived that may fall due
// sooner than it sleeps). It never blocks.
func (s *Service) Notify() {
	l := s.loop
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Close stops the loop and waits for it; a Step in progress finishes
// first. Safe to call more than once and without Start.
func (s *Service) Close() {
	l := s.loop
	l.mu.Lock()
	if l.mu.closed {
		l.mu.Unlock()
		return
	}
	l.mu.closed = true
	started := l.mu.started
	l.mu.Unlock()
	close(l.stop)
	if started {
		<-l.done
	}
}

func (l *loop) run() {
	defer close(l.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.kick:
		}
		next, err := l.step()
		wait := l.cfg.IdleInterval
		if err != nil {
			l.cfg.Logger.Error("due: delivery failed, will retry", "err", err)
			wait = min(wait, l.cfg.RetryInterval)
		}
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(l.cfg.Now()), 0))
		}
		t.Reset(wait)
	}
}
