// Package dueloop owns the goroutine of a delivery service that hands on
// messages when they fall due (broker/schedule for delay levels,
// broker/timer for timer messages): it runs the service's Step, then
// sleeps until the earliest due time Step returned, a Notify, or the idle
// interval, whichever comes first, and after a failed Step retries sooner.
//
// Invariants: at most one Step runs at a time from the loop; Close stops
// the loop and waits for a Step in progress; Start after Close fails.
package dueloop

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("dueloop: closed")

// Config configures a Loop; every field is required.
type Config struct {
	// Name prefixes the loop's log lines ("schedule", "timer").
	Name string
	// Step delivers what is due and returns when the earliest pending
	// message falls due (the zero time when none is pending).
	Step func() (time.Time, error)
	// Now is the clock the due times are on.
	Now func() time.Time
	// IdleInterval is the longest sleep without a Notify; RetryInterval
	// the longest after a failed Step.
	IdleInterval, RetryInterval time.Duration
	Logger                      *slog.Logger
}

// Loop is the goroutine; make it with New.
type Loop struct {
	cfg  Config
	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		started, closed bool
	}
}

// New returns a Loop that runs nothing until Start.
func New(cfg Config) *Loop {
	return &Loop{cfg: cfg, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Start runs the loop in one goroutine until Close.
func (l *Loop) Start() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.mu.closed:
		return ErrClosed
	case l.mu.started:
		return errors.New("dueloop: " + l.cfg.Name + " already started")
	}
	l.mu.started = true
	go l.run()
	return nil
}

// Notify makes the loop step now (a message arrived that may fall due
// sooner than it sleeps). It never blocks.
func (l *Loop) Notify() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Close stops the loop and waits for it; a Step in progress finishes
// first. Safe to call more than once and without Start.
func (l *Loop) Close() {
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

func (l *Loop) run() {
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
		next, err := l.cfg.Step()
		wait := l.cfg.IdleInterval
		if err != nil {
			l.cfg.Logger.Error(l.cfg.Name+": delivery failed, will retry", "err", err)
			wait = min(wait, l.cfg.RetryInterval)
		}
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(l.cfg.Now()), 0))
		}
		t.Reset(wait)
	}
}
