package due

import (
	"encoding/binary"
	"fmt"
)

// What versions before the one checkpoint record stored, read once when
// a store has no record yet (an upgrade); the first progress the Service
// saves then supersedes them, and they are never read again.
//
//   - delay levels: one store delay offset a level (SetDelayOffset,
//     OpSetDelayOffset), the next queue offset of queue level-1 of the
//     schedule topic still to deliver;
//   - timers: the store checkpoint "timer", 16 bytes: the timer queue's
//     lowest offset not delivered and the cursor (the due time of the
//     last delivered timer), both big-endian int64.
//
// Both mean what a lane's saved progress means, so they resume as if
// this version had saved them, resume checks included.

// legacyTimerCheckpoint names the timer progress of older versions.
const legacyTimerCheckpoint = "timer"

// legacyDelayProgress reads the per-level offsets into lanes (queue ids).
func legacyDelayProgress(st Store) ([]laneState, error) {
	offs, err := st.DelayOffsets()
	if err != nil {
		return nil, err
	}
	var out []laneState
	for level, off := range offs {
		if level >= 1 {
			out = append(out, laneState{id: level - 1, next: off})
		}
	}
	return out, nil
}

// legacyTimerProgress reads the "timer" checkpoint into lane 0.
func legacyTimerProgress(st Store) ([]laneState, error) {
	v, ok, err := st.Checkpoint(legacyTimerCheckpoint)
	if err != nil || !ok {
		return nil, err
	}
	if len(v) != 16 {
		return nil, fmt.Errorf("%w: %q of %d bytes, want 16", ErrBadCheckpoint, legacyTimerCheckpoint, len(v))
	}
	return []laneState{{id: 0, next: int64(binary.BigEndian.Uint64(v)), cursor: int64(binary.BigEndian.Uint64(v[8:]))}}, nil
}
