// Package memlimit owns the Go memory limit that Runnel's server processes
// (the broker binary and runnel dev) set at start: the runtime's soft limit
// (debug.SetMemoryLimit), which makes the collector work harder as the heap
// nears it instead of letting a burst double the heap.
//
// Why a default at all: the collector lets the heap grow to twice what is
// live before it collects, and a broker's live heap swings with its load
// (four producers of 4 MiB batches hold tens of MiB of frames and Pebble
// batches at once), so without a limit the process peaked at 220 MiB where
// its live data was under 100. A JVM broker has -Xmx; this is Go's.
//
// It also owns the collector's pace beside the limit: a floor of room
// over the live heap between collections (HeapFloor, floor.go), which
// GOGC in the environment turns off.
//
// Invariants: GOMEMLIMIT in the environment wins over everything (it is
// the runtime's own knob, and the runtime has already applied it); the
// limit is set before the store opens, since store.Options sizes Pebble's
// memtables and cache from it.
package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Default is the limit a server process sets when neither GOMEMLIMIT nor
// --memory-limit says otherwise: the dev cluster's budget, within which
// the broker's RSS stays under 128 MiB under the loads of issue 36 (see
// docs/performance.md).
const Default = 100 << 20

// Off is Parse's value for "off": no limit.
const Off = math.MaxInt64

// FlagUsage is --memory-limit's help.
const FlagUsage = "the Go runtime's soft memory limit, as GOMEMLIMIT writes it (100MiB, 2GiB) or off; GOMEMLIMIT in the environment wins (default 100MiB)"

// Parse reads a limit as GOMEMLIMIT writes it (a number of bytes with an
// optional unit B, KiB, MiB, GiB or TiB), or "off".
func Parse(s string) (int64, error) {
	if s == "off" {
		return Off, nil
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	num, shift := s, uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, shift = n, u.shift
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 || v > Off>>shift {
		return 0, fmt.Errorf("%q: want a size such as 100MiB or 2GiB (units B, KiB, MiB, GiB, TiB), or off", s)
	}
	return v << shift, nil
}

// Apply sets the process's memory limit: flag (as Parse reads it; empty
// means Default) unless GOMEMLIMIT is set in getenv's environment. It
// returns the limit in force and where it came from, for the start-up log.
// Unless GOGC is set there, it also keeps HeapFloor of room over the live
// heap from each collection to the next, once per process.
func Apply(flag string, getenv func(string) string) (limit int64, from string, err error) {
	limit, from, err = applyLimit(flag, getenv)
	if err == nil && getenv("GOGC") == "" {
		floorOnce.Do(func() { keepFloor(HeapFloor, 100) })
	}
	return limit, from, err
}

// floorOnce arms keepFloor once: Apply may be called again (tests).
var floorOnce sync.Once

// applyLimit is Apply's limit.
func applyLimit(flag string, getenv func(string) string) (limit int64, from string, err error) {
	if env := getenv("GOMEMLIMIT"); env != "" {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT", nil
	}
	limit, from = Default, "default"
	if flag != "" {
		if limit, err = Parse(flag); err != nil {
			return 0, "", fmt.Errorf("--memory-limit %w", err)
		}
		from = "--memory-limit"
	}
	debug.SetMemoryLimit(limit)
	return limit, from, nil
}
