package due

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/roundtrip"
)

func TestCheckpointRoundTrip(t *testing.T) {
	lanes := []laneState{{id: 0, next: 7, cursor: 0}, {id: 3, next: 1 << 40, cursor: 1_767_225_600_000}, {id: 17, next: 0, cursor: -5}}
	rec := appendCheckpoint(nil, []section{{name: "timer", state: appendLanes(nil, lanes[:1])}, {name: "delay", state: appendLanes(nil, lanes)}, {name: "pop", state: []byte{}}})
	secs, err := decodeCheckpoint(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 3 || secs[0].name != "delay" || secs[1].name != "pop" || secs[2].name != "timer" || len(secs[1].state) != 0 {
		t.Fatalf("sections %+v, want delay, pop, timer", secs)
	}
	got, err := decodeLanes(secs[0].state)
	if err != nil || !reflect.DeepEqual(got, lanes) {
		t.Fatalf("lanes %+v, %v; want %+v", got, err, lanes)
	}
	for _, bad := range [][]byte{
		nil, {0}, {2, 0}, // no version, wrong version
		rec[:len(rec)-1], append(bytes.Clone(rec), 0), // truncated, trailing
		appendCheckpoint(nil, []section{{name: "a"}, {name: "a"}}), // twice
		appendCheckpoint(nil, []section{{name: ""}}),
		{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, // overlong count
	} {
		if _, err := decodeCheckpoint(bad); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("decodeCheckpoint(%x) = %v, want ErrBadCheckpoint", bad, err)
		}
	}
	for _, bad := range [][]byte{
		{}, {1, 0}, appendLanes(nil, []laneState{{id: 2}, {id: 1}}), appendLanes(nil, []laneState{{id: 1}, {id: 1}}),
		binary.AppendUvarint(binary.AppendUvarint(nil, 1), 1<<31), // lane beyond int32
	} {
		if _, err := decodeLanes(bad); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("decodeLanes(%x) = %v, want ErrBadCheckpoint", bad, err)
		}
	}
}

// FuzzCheckpoint: any bytes decode to an error or to sections and lanes
// that encode to what decodes to them again; never a panic.
func FuzzCheckpoint(f *testing.F) {
	f.Add(appendCheckpoint(nil, []section{{name: "delay", state: appendLanes(nil, []laneState{{id: 0, next: 3}, {id: 2, next: 9}})},
		{name: "timer", state: appendLanes(nil, []laneState{{id: 0, next: 5, cursor: 1_700_000_000_000}})}}))
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		encode := func(secs []section) []byte { return appendCheckpoint(nil, secs) }
		sameCount := func(a, b []section) bool { return len(a) == len(b) }
		secs, ok := roundtrip.Check(t, b, decodeCheckpoint, encode, ErrBadCheckpoint, sameCount)
		if !ok {
			return
		}
		for _, s := range secs {
			lanes, err := decodeLanes(s.state)
			if err != nil {
				continue
			}
			back, err := decodeLanes(appendLanes(nil, lanes))
			if err != nil || !reflect.DeepEqual(back, lanes) {
				t.Fatalf("lanes %+v came back %+v, %v", lanes, back, err)
			}
		}
	})
}

// TestKeepsProgressNotClaimed: a section of no configured source and the
// lanes of levels no longer configured are written back as they were, so
// switching a source off or shortening the level list loses no progress.
func TestKeepsProgressNotClaimed(t *testing.T) {
	e := newEnv(t)
	pop := []byte("pop's own bytes")
	rec := appendCheckpoint(nil, []section{{name: "pop", state: pop},
		{name: "delay", state: appendLanes(nil, []laneState{{id: 0, next: 0}, {id: 5, next: 42}})}})
	if err := e.st.PutCheckpoint(CheckpointName, rec); err != nil {
		t.Fatal(err)
	}
	l := Levels{time.Second}
	e.schedule(l, "T", 0, "a", 1, "u-a")
	e.clock.Advance(time.Second)
	step(t, e.service(opts{levels: l}))
	if got := e.bodies("T", 0); fmt.Sprint(got) != "[a]" {
		t.Fatalf("delivered %v", got)
	}
	if d := e.saved("delay"); d[0][0] != 1 || d[5][0] != 42 || len(d) != 2 {
		t.Fatalf("delay lanes %v, want level 1 at 1 and level 6 kept at 42", d)
	}
	v, _, _ := e.st.Checkpoint(CheckpointName)
	secs, _ := decodeCheckpoint(v)
	if len(secs) != 3 || secs[1].name != "pop" || !bytes.Equal(secs[1].state, pop) {
		t.Fatalf("sections %+v, want pop's kept", secs)
	}
}
