package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/roundtrip"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// sampleOps is one op of every kind, each as a store would accept it.
func sampleOps(t testing.TB) []*Op {
	ts := t0.UnixMilli()
	rec := func(m *message.MessageExt) AppendMessage {
		r, err := message.AppendStoredMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return AppendMessage{Record: r, Topic: m.Topic, QueueID: m.QueueID, TagsCode: message.TagsHashCode(m.Tags()),
			Keys: m.Keys(), UniqKey: m.UniqKey()}
	}
	return []*Op{
		{Kind: OpAppend, Timestamp: ts, Messages: []AppendMessage{
			rec(msg("T", 1, "one", message.PropertyKeys, "a b", message.PropertyTags, "t", message.PropertyUniqClientMessageIDKey, "u1")),
			rec(msg("U", 0, "two")),
		}},
		{Kind: OpCommitOffset, Offsets: []OffsetCommit{{"g", "T", 1, 7}, {"g", "U", 0, -1}, {"h", "T", 3, 1 << 40}}},
		{Kind: OpDeleteGroupOffsets, Group: "g"},
		{Kind: OpPutTopic, TopicConfig: &topicconf.Config{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 8, Perm: 6,
			TopicFilterType: "SINGLE_TAG", TopicSysFlag: 1, Order: true}},
		{Kind: OpDeleteTopic, Topic: "U"},
		{Kind: OpSetDelayOffset, Level: 3, Offset: 12},
		{Kind: OpPutCheckpoint, Name: "cp", Value: []byte{0, 1, 2}},
		{Kind: OpTruncate, Cutoff: 1234, QueueMins: map[QueueID]int64{{Topic: "T", ID: 1}: 5, {Topic: "A", ID: 0}: 2}},
		{Kind: OpPutGroup, GroupConfig: &groupconf.Config{GroupName: "g", ConsumeEnable: false, ConsumeFromMinEnable: true,
			NotifyConsumerIdsChangedEnable: true, RetryQueueNums: 2, RetryMaxTimes: 3, BrokerID: 1,
			WhichBrokerWhenConsumeSlowly: -1, GroupSysFlag: 4, ConsumeTimeoutMinute: 15}},
		{Kind: OpDeleteGroup, Group: "g"},
		{Kind: OpPutAuth, Name: "user/alice", Value: []byte(`{"username":"alice"}`)},
		{Kind: OpDeleteAuth, Name: "user/alice"},
		{Kind: OpInFlight,
			InFlightPut:    []InFlight{{InFlightKey{"g", "T", 1, 7}, []byte{1, 2, 3}}, {InFlightKey{"g", "%RETRY%g_T", 0, 1 << 40}, []byte{}}},
			InFlightDelete: []InFlightKey{{"g", "T", 1, 6}},
			Offsets:        []OffsetCommit{{"g", "T", 1, 8}}},
	}
}

func TestOpEncodingRoundTrips(t *testing.T) {
	for _, op := range sampleOps(t) {
		b := op.Marshal()
		if b[0] != OpVersion || OpKind(b[1]) != op.Kind {
			t.Fatalf("kind %d: header % x", op.Kind, b[:2])
		}
		got, err := DecodeOp(b)
		if err != nil {
			t.Fatalf("kind %d: %v", op.Kind, err)
		}
		if !reflect.DeepEqual(got, op) {
			t.Fatalf("kind %d: decoded %+v, want %+v", op.Kind, got, op)
		}
		if !bytes.Equal(got.Marshal(), b) {
			t.Fatalf("kind %d: re-encoding differs", op.Kind)
		}
	}
	// The truncation's hints are encoded in one order whatever the map's.
	op := sampleOps(t)[7]
	for i := 0; i < 20; i++ {
		op.QueueMins[QueueID{Topic: fmt.Sprint("q", i), ID: int32(i)}] = int64(i)
	}
	first := op.Marshal()
	for i := 0; i < 10; i++ {
		if !bytes.Equal(op.Marshal(), first) {
			t.Fatal("a truncation encodes differently from one Marshal to the next")
		}
	}
}

// Every prefix of a valid op, a wrong version, an unknown kind, trailing
// bytes and counts larger than the bytes present are refused as ErrBadOp.
func TestDecodeOpRefusesGarbage(t *testing.T) {
	for _, op := range sampleOps(t) {
		b := op.Marshal()
		for n := 0; n < len(b); n++ {
			if _, err := DecodeOp(b[:n]); !errors.Is(err, ErrBadOp) {
				t.Fatalf("kind %d cut to %d of %d bytes: %v", op.Kind, n, len(b), err)
			}
		}
		if _, err := DecodeOp(append(b, 0)); !errors.Is(err, ErrBadOp) {
			t.Fatalf("kind %d with a trailing byte: %v", op.Kind, err)
		}
		v := append([]byte(nil), b...)
		v[0] = OpVersion + 1
		if _, err := DecodeOp(v); !errors.Is(err, ErrBadOp) {
			t.Fatalf("kind %d of version %d: %v", op.Kind, v[0], err)
		}
	}
	for _, b := range [][]byte{
		{OpVersion, 0}, {OpVersion, 99},
		{OpVersion, byte(OpCommitOffset), 0xff, 0xff, 0xff, 0xff, 0x0f},       // 4 G offsets in no bytes
		{OpVersion, byte(OpAppend), 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3}, // 4 G records
		{OpVersion, byte(OpDeleteTopic), 0xff, 0xff, 0xff, 0xff, 0x0f, 'x'},   // a 4 GiB name
		{OpVersion, byte(OpSetDelayOffset), 0x80, 0x80, 0x80, 0x80, 0x20, 0},  // level beyond int32
		{OpVersion, byte(OpAppend), 0, 1, 0, 0, 0, 200},                       // a record cut short
	} {
		if _, err := DecodeOp(b); !errors.Is(err, ErrBadOp) {
			t.Fatalf("% x: %v", b, err)
		}
	}
}

// FuzzDecodeOp: DecodeOp never panics, and what it accepts re-encodes to
// an op that decodes the same.
func FuzzDecodeOp(f *testing.F) {
	for _, op := range sampleOps(f) {
		f.Add(op.Marshal())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameEncoding := func(a, b *Op) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }
		roundtrip.Check(t, b, DecodeOp, (*Op).Marshal, ErrBadOp, sameEncoding)
	})
}

// TestAuthOps round-trips the access-control ops and checks that applying
// them, by either path, moves AuthVersion and changes what RangeAuth reads.
func TestAuthOps(t *testing.T) {
	s, _, _ := openMem(t)
	put := &Op{Kind: OpPutAuth, Name: "user/alice", Value: []byte(`{"username":"alice"}`)}
	got, err := DecodeOp(put.Marshal())
	if err != nil || got.Kind != OpPutAuth || got.Name != put.Name || string(got.Value) != string(put.Value) {
		t.Fatalf("decode put: %+v, %v", got, err)
	}
	v0 := s.AuthVersion()
	if _, err := s.ApplyEncoded(put.Marshal()); err != nil {
		t.Fatal(err)
	}
	if err := s.PutAuth("acl/User:alice", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if s.AuthVersion() != v0+2 {
		t.Fatalf("AuthVersion %d after two ops from %d", s.AuthVersion(), v0)
	}
	var names []string
	_ = s.RangeAuth("user/", func(name string, _ []byte) bool { names = append(names, name); return true })
	if len(names) != 1 || names[0] != "user/alice" {
		t.Fatalf("users %q", names)
	}
	del := &Op{Kind: OpDeleteAuth, Name: "user/alice"}
	if _, err := s.ApplyEncoded(del.Marshal()); err != nil {
		t.Fatal(err)
	}
	names = nil
	_ = s.RangeAuth("", func(name string, _ []byte) bool { names = append(names, name); return true })
	if len(names) != 1 || names[0] != "acl/User:alice" {
		t.Fatalf("records after delete %q", names)
	}
	if _, err := s.Apply(&Op{Kind: OpPutAuth}); !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("nameless record: %v", err)
	}
}

// A store restored from a snapshot (what a replica far behind installs)
// never reports an AuthVersion the store it replaces reported, though both
// applied as many access-control ops since they were opened: a cache keyed
// on the version reloads after the swap.
func TestAuthVersionAcrossStores(t *testing.T) {
	a, _, _ := openMem(t)
	if err := a.PutAuth("user/alice", []byte(`{"username":"alice"}`)); err != nil {
		t.Fatal(err)
	}
	cached := a.AuthVersion()
	var snap bytes.Buffer
	if err := a.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	b, err := Restore(memOptions(vfs.NewMem(), fakeclock.New(t0)), &snap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.DeleteAuth("user/alice"); err != nil {
		t.Fatal(err)
	}
	if b.AuthVersion() == cached {
		t.Fatalf("the restored store reports version %d after one op, as the old one did", cached)
	}
}
