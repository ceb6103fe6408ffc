package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestFloorPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		base int
		want int
	}{
		{4 << 20, 100, 400},  // a cgo broker's heap: collected after 16 MiB, not 4
		{16 << 20, 100, 100}, // the floor reached: paced as before
		{64 << 20, 100, 100}, // a static build's heap, Pebble's memory on it
		{64 << 20, 150, 150}, // never below the process's own pace
		{1 << 10, 100, 1000}, // a nearly empty heap: room capped at ten times it
		{0, 100, 1000},
	} {
		if got := floorPercent(c.live, HeapFloor, c.base); got != c.want {
			t.Errorf("floorPercent(%d, %d, %d) = %d, want %d", c.live, HeapFloor, c.base, got, c.want)
		}
	}
}

// gcPercent reads the collector's pace without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestApplyKeepsHeapFloor: once Apply has run (no GOGC in the
// environment), a collection leaves the test binary's small live heap at
// least HeapFloor of room: GOGC rises above 100 after a cycle.
func TestApplyKeepsHeapFloor(t *testing.T) {
	limitBefore, gcBefore := debug.SetMemoryLimit(-1), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(limitBefore); debug.SetGCPercent(gcBefore) })
	if _, _, err := Apply("", func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for gcPercent() <= 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d after collections; want the heap floor's pace", gcPercent())
		}
		runtime.GC() // the finalizer runs after the cycle, on its own goroutine
		time.Sleep(10 * time.Millisecond)
	}
}
