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
		{math.MaxInt64, 8 << 20, 16 << 20},
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
