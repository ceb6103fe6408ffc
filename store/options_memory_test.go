package store

import (
	"math"
	"testing"
)

// TestDefaultMemory: the Pebble memory defaults follow GOMEMLIMIT within
// their bounds, and are the dev-cluster sizes without one.
func TestDefaultMemory(t *testing.T) {
	for _, c := range []struct {
		limit    int64
		memtable uint64
		cache    int64
	}{
		{math.MaxInt64, 4 << 20, 16 << 20},
		{64 << 20, 4 << 20, 8 << 20},
		{512 << 20, 16 << 20, 32 << 20},
		{64 << 30, 64 << 20, 256 << 20},
	} {
		m, ch := defaultMemory(c.limit)
		if m != c.memtable || ch != c.cache {
			t.Errorf("limit %d: memtable %d cache %d, want %d %d", c.limit, m, ch, c.memtable, c.cache)
		}
	}
}

// TestReleaseMemoryEmptiesTheBlockCache: an idle store's release flushes
// the memtables and evicts the blocks a drained consumer left cached, and
// the store reads the same messages afterwards.
func TestReleaseMemoryEmptiesTheBlockCache(t *testing.T) {
	s, _, _ := openMem(t)
	putBig(t, s, "T", 3000)
	if err := s.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		t.Helper()
		if got := readAll(t, s, "T"); len(got) != 3000 {
			t.Fatalf("%d messages read, want 3000", len(got))
		}
	}
	drain()
	if s.CachedBytes() == 0 {
		t.Fatal("nothing cached after reading 3 MB of flushed log: the test reads nothing from tables")
	}
	if err := s.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	if n := s.CachedBytes(); n != 0 {
		t.Fatalf("%d bytes still cached after the release", n)
	}
	drain()
}

// TestBackgroundWorkCountsFlushes: the count an idle detector watches
// moves when Pebble flushes, and stands still while nothing happens.
func TestBackgroundWorkCountsFlushes(t *testing.T) {
	s, _, _ := openMem(t)
	putBig(t, s, "T", 100)
	before := s.BackgroundWork()
	if err := s.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	after := s.BackgroundWork()
	if after <= before {
		t.Fatalf("background work %d before the flushes, %d after", before, after)
	}
}
