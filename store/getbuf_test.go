package store

import (
	"bytes"
	"runtime"
	"testing"
)

// A consumer's Gets reuse the buffers recycled after their answers: 200
// Gets of 32 records of 1 KiB allocate a small part of one buffer each on
// average, where each allocated a 64 KiB one. (Averaged over the loop, so
// a sync.Pool emptied by a collection in between does not fail it.)
func TestRecycledGetBuffersAreReused(t *testing.T) {
	if raceEnabled {
		// sync.Pool drops a quarter of its Puts under the race detector;
		// the tests' second pass, without it, runs this.
		t.Skip("sync.Pool keeps only some buffers under the race detector")
	}
	s, _, _ := openMem(t)
	putBig(t, s, "T", 64)
	get := func() *GetResult {
		r, err := s.Get("T", 0, 0, 32, 0, nil)
		if err != nil || r.Count != 32 {
			t.Fatalf("%v, %d messages", err, r.Count)
		}
		return r
	}
	get().Recycle() // the first buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		get().Recycle()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 8<<10 {
		t.Fatalf("%d bytes allocated per Get and Recycle, want well under the 35 KB of records", per)
	}
	t.Logf("%d bytes allocated per Get and Recycle", (after.TotalAlloc-before.TotalAlloc)/n)
}

// A result that is not recycled keeps its records while others are
// recycled and reused; Recycle twice, or of a result without records, does
// nothing; a recycled result lets go of its records.
func TestRecycleOnlyGivesBackItsOwn(t *testing.T) {
	s, _, _ := openMem(t)
	putBig(t, s, "T", 64)
	kept, err := s.Get("T", 0, 0, 32, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(kept.Messages)
	for range 10 {
		r, err := s.Get("T", 0, 32, 32, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Recycle()
		if r.Messages != nil {
			t.Fatal("a recycled result still holds its records")
		}
		r.Recycle()
	}
	if !bytes.Equal(kept.Messages, want) {
		t.Fatal("a result that was not recycled had its records overwritten")
	}
	empty, err := s.Get("T", 0, 64, 32, 0, nil)
	if err != nil || empty.Count != 0 {
		t.Fatalf("%v, %d", err, empty.Count)
	}
	empty.Recycle()
}

// Buffer classes: each holds what it is chosen for, and none is chosen for
// more than the largest.
func TestGetBufClass(t *testing.T) {
	for _, n := range []int{1, minGetBuf - 1, minGetBuf, minGetBuf + 1, 35 << 10, 64 << 10, 64<<10 + 1, maxGetBuf} {
		c := getBufClass(n)
		if c < 0 || c >= getClasses || minGetBuf<<c < n || (c > 0 && minGetBuf<<(c-1) >= n) {
			t.Errorf("class %d for %d bytes", c, n)
		}
	}
	if c := getBufClass(maxGetBuf + 1); c != -1 {
		t.Errorf("class %d for more than the largest", c)
	}
}
