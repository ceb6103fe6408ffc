package sampler

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestCounterGivesRatesAndStartsOverWhenItFalls(t *testing.T) {
	s := New(time.Minute)
	s.Counter("in", t0, 100)
	if _, ok := s.Last("in"); ok {
		t.Fatal("a rate after one reading")
	}
	s.Counter("in", t0.Add(5*time.Second), 150)
	s.Counter("in", t0.Add(10*time.Second), 150)
	s.Counter("in", t0.Add(15*time.Second), 10) // restarted: no point
	s.Counter("in", t0.Add(20*time.Second), 30)
	got := s.Points("in")
	want := []float64{10, 0, 4}
	if len(got) != len(want) {
		t.Fatalf("points %v", got)
	}
	for i, p := range got {
		if p.V != want[i] {
			t.Fatalf("point %d = %v, want %v (all %v)", i, p.V, want[i], got)
		}
	}
	// A reading at the same time (or earlier) is ignored.
	s.Counter("in", t0.Add(20*time.Second), 1e9)
	if p, _ := s.Last("in"); p.V != 4 {
		t.Fatalf("last %v after a repeated time", p)
	}
}

func TestSeriesKeepTheWindowAndPruneDropsIdleOnes(t *testing.T) {
	s := New(30 * time.Second)
	for i := range 10 {
		s.Gauge("lag", t0.Add(time.Duration(i)*10*time.Second), float64(i))
	}
	got := s.Points("lag")
	if len(got) != 4 || got[0].V != 6 || got[3].V != 9 {
		t.Fatalf("points in the window: %v", got)
	}
	s.Gauge("other", t0.Add(100*time.Second), 1)
	s.Prune(t0.Add(125 * time.Second))
	if keys := s.Keys(); len(keys) != 1 || keys[0] != "other" {
		t.Fatalf("keys after prune: %v", keys)
	}
	// Points is a copy.
	p := s.Points("other")
	p[0].V = 42
	if q, _ := s.Last("other"); q.V != 1 {
		t.Fatal("Points shares its slice")
	}
}
