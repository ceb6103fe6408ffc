package schedule

import "github.com/runnelmq/runnel/broker/dueloop"

// ErrClosed is returned by Start after Close.
var ErrClosed = dueloop.ErrClosed

// Start runs the delivery loop (package dueloop) in one goroutine until
// Close.
func (s *Service) Start() error { return s.loop.Start() }

// Close stops the loop and waits for it; a delivery in progress finishes
// first. Safe to call more than once and without Start.
func (s *Service) Close() { s.loop.Close() }
