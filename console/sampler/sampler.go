// Package sampler keeps the console's time series: what it reads from the
// cluster every interval (message counts, consumer offsets, lag), held for
// a window of the last minutes, so that pages can draw rates and lag over
// time. It is pure: the caller reads the cluster and hands readings in with
// their time, so tests drive it with made-up times and no sleeping.
//
// Invariants:
//   - A series holds points no older than the window before its newest
//     point, oldest first.
//   - A counter's series holds rates per second between consecutive
//     readings; a reading below the one before (a restarted broker, a
//     deleted and recreated topic) starts the counter over and adds no
//     point.
//   - Series not updated for a window are dropped by Prune, so a cluster
//     whose topics come and go does not grow the store without bound.
package sampler

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Point is one value at one time.
type Point struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

type series struct {
	points  []Point
	last    Point // a counter's last raw reading
	hasLast bool
	updated time.Time
}

// Store holds series by key. It is safe for concurrent use.
type Store struct {
	window time.Duration

	mu struct {
		sync.Mutex
		series map[string]*series
	}
}

// New returns a store keeping window of history per series.
func New(window time.Duration) *Store {
	s := &Store{window: window}
	s.mu.series = map[string]*series{}
	return s
}

// Window is how much history a series keeps.
func (s *Store) Window() time.Duration { return s.window }

func (s *Store) seriesLocked(key string) *series {
	se := s.mu.series[key]
	if se == nil {
		se = &series{}
		s.mu.series[key] = se
	}
	return se
}

func (s *Store) appendLocked(se *series, p Point) {
	se.points = append(se.points, p)
	cut := p.T.Add(-s.window)
	i := 0
	for i < len(se.points) && se.points[i].T.Before(cut) {
		i++
	}
	if i > 0 {
		se.points = append(se.points[:0], se.points[i:]...)
	}
}

// Gauge records value v of key at t (lag, queue depth).
func (s *Store) Gauge(key string, t time.Time, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.seriesLocked(key)
	se.updated = t
	if n := len(se.points); n > 0 && !t.After(se.points[n-1].T) {
		return // time must move on
	}
	s.appendLocked(se, Point{T: t, V: v})
}

// Counter records the running total v of key at t (messages stored,
// offsets consumed) and, from the second reading on, adds the rate per
// second since the reading before.
func (s *Store) Counter(key string, t time.Time, v float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.seriesLocked(key)
	se.updated = t
	prev, had := se.last, se.hasLast
	if had && !t.After(prev.T) {
		return
	}
	se.last, se.hasLast = Point{T: t, V: v}, true
	if !had || v < prev.V {
		return
	}
	s.appendLocked(se, Point{T: t, V: (v - prev.V) / t.Sub(prev.T).Seconds()})
}

// Points returns a copy of key's points, oldest first.
func (s *Store) Points(key string) []Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.mu.series[key]
	if se == nil {
		return nil
	}
	return append([]Point(nil), se.points...)
}

// Last returns key's newest point.
func (s *Store) Last(key string) (Point, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.mu.series[key]
	if se == nil || len(se.points) == 0 {
		return Point{}, false
	}
	return se.points[len(se.points)-1], true
}

// Keys returns every key, sorted.
func (s *Store) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.mu.series))
}

// Prune drops the series not updated in the window before now.
func (s *Store) Prune(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cut := now.Add(-s.window)
	for k, se := range s.mu.series {
		if se.updated.Before(cut) {
			delete(s.mu.series, k)
		}
	}
}
