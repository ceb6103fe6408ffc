package metrics

import (
	"sync"
	"sync/atomic"
)

// labelSet admits at most limit distinct values of one label; Value maps
// every later value to Other. Admitted values stay for the process's life
// (a series, once exported, keeps its name).
type labelSet struct {
	limit int
	known sync.Map // string -> struct{}
	full  atomic.Bool
	mu    struct {
		sync.Mutex
		n int
	}
}

func newLabelSet(limit int) *labelSet { return &labelSet{limit: limit} }

// Value returns v if it is, or can still be, admitted, else Other.
func (s *labelSet) Value(v string) string {
	if _, ok := s.known.Load(v); ok {
		return v
	}
	if s.full.Load() {
		return Other
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.known.Load(v); ok {
		return v
	}
	if s.mu.n >= s.limit {
		s.full.Store(true)
		return Other
	}
	s.mu.n++
	s.known.Store(v, struct{}{})
	return v
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
