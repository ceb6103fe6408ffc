package store

import (
	"errors"
	"reflect"
	"testing"
)

func inFlightRecords(t *testing.T, s *Store) []InFlight {
	t.Helper()
	var out []InFlight
	if err := s.RangeInFlight(func(r InFlight) bool { out = append(out, r); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInFlightOps: an OpInFlight deletes, then puts, then commits offsets
// in one batch, by either apply path; what it wrote survives a reopen;
// deleting a topic deletes its records; an op that changes nothing or
// names a bad key is refused and writes nothing.
func TestInFlightOps(t *testing.T) {
	s, clock, fs := openMem(t)
	k := func(g, tp string, q int32, off int64) InFlightKey { return InFlightKey{g, tp, q, off} }
	pop := &Op{Kind: OpInFlight, InFlightPut: []InFlight{
		{k("g", "T", 1, 5), []byte("a")}, {k("g", "T", 1, 6), []byte("b")}, {k("h", "U", 0, 0), []byte("c")}},
		Offsets: []OffsetCommit{{"g", "T", 1, 7}}}
	if _, err := s.Apply(pop); err != nil {
		t.Fatal(err)
	}
	// An ack of one and a change of another, through the encoded path:
	// deleted and put again by one op, the record is kept with its new value.
	change := &Op{Kind: OpInFlight, InFlightDelete: []InFlightKey{k("g", "T", 1, 5), k("g", "T", 1, 6)},
		InFlightPut: []InFlight{{k("g", "T", 1, 6), []byte("b2")}}}
	if _, err := s.ApplyEncoded(change.Marshal()); err != nil {
		t.Fatal(err)
	}
	want := []InFlight{{k("g", "T", 1, 6), []byte("b2")}, {k("h", "U", 0, 0), []byte("c")}}
	if got := inFlightRecords(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	if off, ok, err := s.ConsumerOffset("g", "T", 1); err != nil || !ok || off != 7 {
		t.Fatalf("offset %d %v %v, want 7", off, ok, err)
	}
	for _, bad := range []*Op{
		{Kind: OpInFlight},
		{Kind: OpInFlight, InFlightPut: []InFlight{{k("", "T", 0, 0), nil}}},
		{Kind: OpInFlight, InFlightPut: []InFlight{{k("g", "T", -1, 0), nil}}},
		{Kind: OpInFlight, InFlightDelete: []InFlightKey{k("g", "T", 0, -1)}},
		{Kind: OpInFlight, InFlightPut: []InFlight{{k("g", "T", 0, 9), nil}}, Offsets: []OffsetCommit{{"g", "", 0, 1}}},
	} {
		if _, err := s.Apply(bad); !errors.Is(err, ErrInvalidOp) {
			t.Fatalf("%+v: %v, want ErrInvalidOp", bad, err)
		}
	}
	if got := inFlightRecords(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("a refused op wrote: %+v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, memOptions(fs, clock))
	if got := inFlightRecords(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen %+v, want %+v", got, want)
	}
	if _, err := s.Apply(&Op{Kind: OpDeleteTopic, Topic: "T"}); err != nil {
		t.Fatal(err)
	}
	if got := inFlightRecords(t, s); !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("after deleting T %+v, want %+v", got, want[1:])
	}
}
