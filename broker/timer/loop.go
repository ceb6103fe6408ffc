package timer

import (
	"errors"
	"time"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("timer: closed")

// Start runs the delivery loop in one goroutine until Close.
func (s *Service) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.mu.closed:
		return ErrClosed
	case s.mu.started:
		return errors.New("timer: already started")
	}
	s.mu.started = true
	go s.loop()
	return nil
}

// Close stops the loop and waits for it; a delivery in progress finishes
// first. Safe to call more than once and without Start.
func (s *Service) Close() {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return
	}
	s.mu.closed = true
	started := s.mu.started
	s.mu.Unlock()
	close(s.stop)
	if started {
		<-s.done
	}
}

// loop steps, then sleeps until the earliest due time, a Notify, or
// IdleInterval, whichever comes first.
func (s *Service) loop() {
	defer close(s.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.kick:
		}
		next, err := s.Step()
		wait := s.cfg.IdleInterval
		if err != nil {
			s.cfg.Logger.Error("timer: delivery failed, will retry", "err", err)
			wait = min(wait, s.cfg.RetryInterval)
		}
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(s.cfg.Now()), 0))
		}
		t.Reset(wait)
	}
}
