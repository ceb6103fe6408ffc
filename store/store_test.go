package store

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		if mib, _ := strconv.ParseInt(os.Getenv(fillEnv), 10, 64); mib > 0 {
			fillChild(mib)
		}
		crashChild()
		return
	}
	goleak.VerifyTestMain(m)
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func memOptions(fs vfs.FS, clock *fakeclock.Clock) Options {
	// A small CheckpointBytes makes the tests cross many checkpoints of
	// the queues' tails and the index.
	o := Options{Dir: "db", FS: fs, Now: clock.Now, RetentionInterval: -1, FlushInterval: -1,
		MemTableSize: 4 << 20, CacheSize: 8 << 20, CheckpointBytes: 4 << 10}
	return o
}

func openMem(t testing.TB) (*Store, *fakeclock.Clock, vfs.FS) {
	t.Helper()
	fs := vfs.NewMem()
	clock := fakeclock.New(t0)
	return mustOpen(t, memOptions(fs, clock)), clock, fs
}

// mustOpen opens a store of opts and closes it at t's cleanup.
func mustOpen(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func msg(topic string, q int32, body string, props ...string) *message.MessageExt {
	m := &message.MessageExt{
		Message: message.Message{Topic: topic, Body: []byte(body)},
		QueueID: q, BornTimestamp: 1, BornHost: netip.MustParseAddrPort("10.0.0.1:5000"),
		StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"),
	}
	for i := 0; i+1 < len(props); i += 2 {
		m.SetProperty(props[i], props[i+1])
	}
	return m
}

func mustPut(t testing.TB, s *Store, ms ...*message.MessageExt) []PutResult {
	t.Helper()
	r, err := s.Put(ms)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runWriters starts n goroutines, each calling put(w, i) for i = 0, 1, ...
// until put returns false or stop is called; stop waits for them all.
func runWriters(n int, put func(w, i int) bool) (stop func()) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if !put(w, i) {
					return
				}
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

func bodies(t testing.TB, b []byte) []string {
	t.Helper()
	ms, err := message.DecodeMessagesRaw(b)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Body)
	}
	return out
}

// readAll reads queue 0 of topic from offset 0 to its end and returns the
// bodies.
func readAll(t *testing.T, s *Store, topic string) []string {
	t.Helper()
	var out []string
	for off := int64(0); ; {
		r, err := s.Get(topic, 0, off, 32, 1<<20, nil)
		if err != nil {
			t.Fatalf("get %s at %d: %v", topic, off, err)
		}
		if r.Count == 0 {
			return out
		}
		out = append(out, bodies(t, r.Messages)...)
		off = r.NextBeginOffset
	}
}

func TestAppendAssignsOffsets(t *testing.T) {
	s, clock, _ := openMem(t)
	clock.Set(t0.Add(time.Second))
	r1 := mustPut(t, s, msg("A", 0, "a0"))
	r2 := mustPut(t, s, msg("A", 1, "b0"), msg("A", 0, "a1"), msg("A", 0, "a2"))
	r3 := mustPut(t, s, msg("B", 0, "c0"))
	got := []PutResult{r1[0], r2[0], r2[1], r2[2], r3[0]}
	wantQ := []int64{0, 0, 1, 2, 0}
	phys := int64(0)
	for i, r := range got {
		if r.QueueOffset != wantQ[i] {
			t.Errorf("msg %d queue offset %d, want %d", i, r.QueueOffset, wantQ[i])
		}
		if r.CommitLogOffset != phys {
			t.Errorf("msg %d phys %d, want %d", i, r.CommitLogOffset, phys)
		}
		if r.StoreTimestamp != t0.Add(time.Second).UnixMilli() {
			t.Errorf("msg %d store time %d", i, r.StoreTimestamp)
		}
		if r.OffsetMsgID() != message.OffsetMsgID(netip.MustParseAddrPort("10.0.0.2:10911"), phys) {
			t.Errorf("msg %d id %s", i, r.OffsetMsgID())
		}
		phys += int64(r.Size)
	}
	if s.MaxPhysOffset() != phys || s.MaxOffset("A", 0) != 3 || s.MaxOffset("A", 1) != 1 || s.MaxOffset("B", 0) != 1 {
		t.Fatalf("bounds: phys %d, A0 %d A1 %d B0 %d", s.MaxPhysOffset(), s.MaxOffset("A", 0), s.MaxOffset("A", 1), s.MaxOffset("B", 0))
	}
	// The stored record carries what the store assigned.
	res, err := s.Get("A", 0, 2, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := message.DecodeMessagesRaw(res.Messages)
	m := ms[0]
	if m.QueueOffset != 2 || m.CommitLogOffset != r2[2].CommitLogOffset || m.StoreTimestamp != r2[2].StoreTimestamp ||
		string(m.Body) != "a2" || m.BodyCRC != message.BodyCRC([]byte("a2")) {
		t.Fatalf("stored record %+v", m)
	}
}

func TestStoreTimeNeverDecreases(t *testing.T) {
	s, clock, _ := openMem(t)
	clock.Set(t0.Add(10 * time.Second))
	mustPut(t, s, msg("A", 0, "x"))
	clock.Set(t0) // clock stepped back
	r := mustPut(t, s, msg("A", 0, "y"))
	if r[0].StoreTimestamp != t0.Add(10*time.Second).UnixMilli() {
		t.Fatalf("store time went back to %d", r[0].StoreTimestamp)
	}
}

func TestGetStatuses(t *testing.T) {
	s, _, _ := openMem(t)
	for i := 0; i < 5; i++ {
		mustPut(t, s, msg("T", 0, fmt.Sprint("m", i), message.PropertyTags, []string{"red", "blue"}[i%2]))
	}
	red := newTagSet(message.TagsHashCode("red"))
	green := newTagSet(message.TagsHashCode("green"))
	cases := []struct {
		name            string
		topic           string
		offset          int64
		max             int
		filter          Filter
		status          GetStatus
		next, min, maxO int64
		bodies          []string
	}{
		{"found", "T", 0, 3, nil, GetFound, 3, 0, 5, []string{"m0", "m1", "m2"}},
		{"found tail", "T", 3, 32, nil, GetFound, 5, 0, 5, []string{"m3", "m4"}},
		{"maxMsgs 0 gives one", "T", 1, 0, nil, GetFound, 2, 0, 5, []string{"m1"}},
		{"tag filter", "T", 0, 32, red, GetFound, 5, 0, 5, []string{"m0", "m2", "m4"}},
		{"tag filter stops at max", "T", 1, 1, red, GetFound, 3, 0, 5, []string{"m2"}},
		{"no match", "T", 0, 32, green, GetNoMatchedMessage, 5, 0, 5, nil},
		{"overflow one", "T", 5, 32, nil, GetOffsetOverflowOne, 5, 0, 5, nil},
		{"overflow badly", "T", 9, 32, nil, GetOffsetOverflowBadly, 5, 0, 5, nil},
		{"unknown queue", "T", 3, 32, nil, GetNoMessageInQueue, 0, 0, 0, nil},
		{"unknown topic", "U", 0, 32, nil, GetNoMessageInQueue, 0, 0, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := int32(0)
			if c.name == "unknown queue" {
				q = 7
			}
			r, err := s.Get(c.topic, q, c.offset, c.max, 0, c.filter)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != c.status || r.NextBeginOffset != c.next || r.MinOffset != c.min || r.MaxOffset != c.maxO {
				t.Fatalf("got %v next %d min %d max %d; want %v %d %d %d", r.Status, r.NextBeginOffset, r.MinOffset, r.MaxOffset,
					c.status, c.next, c.min, c.maxO)
			}
			var got []string
			if len(r.Messages) > 0 {
				got = bodies(t, r.Messages)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.bodies) || r.Count != len(c.bodies) {
				t.Fatalf("bodies %v (count %d), want %v", got, r.Count, c.bodies)
			}
		})
	}
}

// putBig puts n messages of 1000-byte bodies on queue 0 of topic.
func putBig(t *testing.T, s *Store, topic string, n int) {
	t.Helper()
	big := string(bytes.Repeat([]byte("x"), 1000))
	for range n {
		mustPut(t, s, msg(topic, 0, big))
	}
}

func TestGetByteLimit(t *testing.T) {
	s, _, _ := openMem(t)
	putBig(t, s, "T", 10)
	r, _ := s.Get("T", 0, 0, 32, 2500, nil)
	if r.Count != 2 || r.NextBeginOffset != 2 {
		t.Fatalf("byte-capped get returned %d, next %d", r.Count, r.NextBeginOffset)
	}
	r, _ = s.Get("T", 0, 0, 32, 10, nil) // first message always fits
	if r.Count != 1 {
		t.Fatalf("tiny cap returned %d", r.Count)
	}
	// The store's transfer cap (32 by default) bounds large requests.
	for i := 0; i < 40; i++ {
		mustPut(t, s, msg("S", 0, "s"))
	}
	if r, _ = s.Get("S", 0, 0, 1000, 1<<30, nil); r.Count != 32 {
		t.Fatalf("transfer cap: %d", r.Count)
	}
}

// A Get at the head of a queue, asking for 32 where 2 are there (a
// consumer keeping up), allocates room for those 2, not for 32.
func TestGetSizesToWhatIsThere(t *testing.T) {
	s, _, _ := openMem(t)
	putBig(t, s, "T", 10)
	r, err := s.Get("T", 0, 8, 32, 0, nil)
	if err != nil || r.Count != 2 {
		t.Fatalf("%v, %d messages", err, r.Count)
	}
	// (Rounded up to a pooled buffer's size, at most twice as much.)
	if cap(r.Messages) > 2*len(r.Messages) || cap(r.QueueOffsets) != 2 {
		t.Fatalf("capacity %d bytes for %d, %d offsets for 2", cap(r.Messages), len(r.Messages), cap(r.QueueOffsets))
	}
}

// The Go client must decode a Get result as a PULL body.
func TestGetIsPullBody(t *testing.T) {
	s, _, _ := openMem(t)
	mustPut(t, s, msg("T", 0, "one", message.PropertyTags, "a"), msg("T", 0, "two", message.PropertyKeys, "k"))
	r, _ := s.Get("T", 0, 0, 32, 0, nil)
	ms, err := message.DecodeMessages(r.Messages)
	if err != nil || len(ms) != 2 || ms[0].QueueOffset != 0 || ms[1].QueueOffset != 1 || ms[1].Keys()[0] != "k" {
		t.Fatalf("%v %+v", err, ms)
	}
}

func TestOffsetByTime(t *testing.T) {
	s, clock, _ := openMem(t)
	for i := 0; i < 10; i++ {
		clock.Set(t0.Add(time.Duration(i/2) * time.Second)) // two messages per second
		mustPut(t, s, msg("T", 0, "x"))
	}
	cases := []struct {
		ts   time.Time
		want int64
	}{
		{t0.Add(-time.Hour), 0},
		{t0, 0},
		{t0.Add(time.Millisecond), 2},
		{t0.Add(2 * time.Second), 4},
		{t0.Add(4 * time.Second), 8},
		{t0.Add(5 * time.Second), 10},
	}
	for _, c := range cases {
		got, err := s.OffsetByTime("T", 0, c.ts.UnixMilli())
		if err != nil || got != c.want {
			t.Errorf("OffsetByTime(%v) = %d, %v; want %d", c.ts.Sub(t0), got, err, c.want)
		}
	}
	e, err := s.QueueEntry("T", 0, 9)
	if err != nil || e.StoreTimestamp != t0.Add(4*time.Second).UnixMilli() {
		t.Fatalf("QueueEntry: %+v %v", e, err)
	}
	if _, err := s.QueueEntry("T", 0, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("QueueEntry past max: %v", err)
	}
}

func TestLookups(t *testing.T) {
	s, clock, _ := openMem(t)
	clock.Set(t0.Add(time.Minute))
	r := mustPut(t, s,
		msg("T", 0, "a", message.PropertyKeys, "order-1 shared", message.PropertyUniqClientMessageIDKey, "U1"),
		msg("T", 1, "b", message.PropertyKeys, "shared", message.PropertyUniqClientMessageIDKey, "U2"),
		msg("Other", 0, "c", message.PropertyKeys, "shared"))
	rec, err := s.LookupMessageID(r[1].OffsetMsgID())
	if err != nil || bodies(t, rec)[0] != "b" {
		t.Fatalf("by id: %v", err)
	}
	if _, err := s.LookupMessageID(message.OffsetMsgID(netip.MustParseAddrPort("1.2.3.4:1"), 3)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("mid-record id: %v", err)
	}
	if _, err := s.LookupMessageID("zz"); err == nil {
		t.Fatal("bad id accepted")
	}
	cases := []struct {
		name   string
		got    func() ([][]byte, error)
		bodies []string
	}{
		{"key one", func() ([][]byte, error) { return s.QueryByKey("T", "order-1", 10, 0, 0) }, []string{"a"}},
		{"key shared", func() ([][]byte, error) { return s.QueryByKey("T", "shared", 10, 0, 0) }, []string{"a", "b"}},
		{"key max", func() ([][]byte, error) { return s.QueryByKey("T", "shared", 1, 0, 0) }, []string{"a"}},
		{"key other topic", func() ([][]byte, error) { return s.QueryByKey("Other", "shared", 10, 0, 0) }, []string{"c"}},
		{"key time window", func() ([][]byte, error) {
			return s.QueryByKey("T", "shared", 10, t0.Add(2*time.Minute).UnixMilli(), 0)
		}, nil},
		{"key missing", func() ([][]byte, error) { return s.QueryByKey("T", "nope", 10, 0, 0) }, nil},
		{"key prefix only", func() ([][]byte, error) { return s.QueryByKey("T", "order", 10, 0, 0) }, nil},
		{"uniq", func() ([][]byte, error) { return s.QueryByUniqKey("T", "U2", 10) }, []string{"b"}},
		{"uniq wrong topic", func() ([][]byte, error) { return s.QueryByUniqKey("Other", "U2", 10) }, nil},
	}
	for _, c := range cases {
		recs, err := c.got()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, bodies(t, r)...)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.bodies) {
			t.Errorf("%s: %v, want %v", c.name, got, c.bodies)
		}
	}
}

func TestBatchIsAtomic(t *testing.T) {
	s, _, _ := openMem(t)
	mustPut(t, s, msg("T", 0, "ok"))
	bad := msg("T", 0, "bad")
	bad.Topic = string(bytes.Repeat([]byte("t"), 300)) // cannot be encoded
	if _, err := s.Put([]*message.MessageExt{msg("T", 0, "first"), bad}); !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("bad batch: %v", err)
	}
	// An op that fails inside apply leaves no trace either.
	good, _ := message.AppendStoredMessage(nil, msg("T", 0, "g"))
	_, err := s.Apply(&Op{Kind: OpAppend, Messages: []AppendMessage{
		{Record: good, Topic: "T"}, {Record: good[:10], Topic: "T"}}})
	if !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("bad record: %v", err)
	}
	if s.MaxOffset("T", 0) != 1 {
		t.Fatalf("max offset %d after failed batches", s.MaxOffset("T", 0))
	}
	if rep, err := s.Verify(); err != nil || rep.Records != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

func TestConsumerOffsetsAndMeta(t *testing.T) {
	s, _, fs := openMem(t)
	steps := []struct {
		group, topic string
		q            int32
		off          int64
	}{{"g1", "T", 0, 5}, {"g1", "T", 1, 7}, {"g1", "T", 0, 9}, {"g2", "T", 0, 1}, {"g10", "U", 3, 2}}
	for _, st := range steps {
		if err := s.CommitOffset(st.group, st.topic, st.q, st.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutTopic(topicconf.Config{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTopic(topicconf.Config{TopicName: "TBW102", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTopic(topicconf.Config{TopicName: ""}); !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("empty topic name: %v", err)
	}
	_ = s.SetDelayOffset(3, 100)
	_ = s.SetDelayOffset(18, 7)
	_ = s.PutCheckpoint("ha", []byte("state"))
	check := func(s *Store) {
		t.Helper()
		for _, c := range []struct {
			g, t string
			q    int32
			off  int64
			ok   bool
		}{{"g1", "T", 0, 9, true}, {"g1", "T", 1, 7, true}, {"g2", "T", 0, 1, true}, {"g1", "T", 2, 0, false}, {"g", "T", 0, 0, false}} {
			off, ok, err := s.ConsumerOffset(c.g, c.t, c.q)
			if err != nil || ok != c.ok || off != c.off {
				t.Errorf("offset %s/%s/%d = %d %v %v", c.g, c.t, c.q, off, ok, err)
			}
		}
		var all []string
		_ = s.RangeConsumerOffsets(func(g, tp string, q int32, off int64) bool {
			all = append(all, fmt.Sprintf("%s/%s/%d=%d", g, tp, q, off))
			return true
		})
		if fmt.Sprint(all) != "[g1/T/0=9 g1/T/1=7 g2/T/0=1 g10/U/3=2]" {
			t.Errorf("range: %v", all)
		}
		tc, ok, err := s.Topic("T")
		if err != nil || !ok || tc.ReadQueueNums != 4 || tc.Perm != 6 || tc.TopicFilterType != "SINGLE_TAG" {
			t.Errorf("topic: %+v %v %v", tc, ok, err)
		}
		if ts, _ := s.Topics(); len(ts) != 2 || ts[0].TopicName != "T" || ts[1].TopicName != "TBW102" {
			t.Errorf("topics: %+v", ts)
		}
		if d, _ := s.DelayOffsets(); d[3] != 100 || d[18] != 7 || len(d) != 2 {
			t.Errorf("delay: %v", d)
		}
		if v, ok, _ := s.Checkpoint("ha"); !ok || string(v) != "state" {
			t.Errorf("checkpoint: %q", v)
		}
	}
	check(s)
	// Everything survives a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(memOptions(fs, fakeclock.New(t0)))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	check(s2)
	if err := s2.DeleteConsumerOffsets("g1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s2.ConsumerOffset("g1", "T", 0); ok {
		t.Error("g1 offsets survived delete")
	}
	if _, ok, _ := s2.ConsumerOffset("g10", "U", 3); !ok {
		t.Error("g10 deleted with g1")
	}
}

func TestDeleteTopic(t *testing.T) {
	s, _, _ := openMem(t)
	mustPut(t, s, msg("T", 0, "a"), msg("T", 1, "b"), msg("K", 0, "keep"))
	_ = s.PutTopic(topicconf.Config{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6})
	for _, g := range []string{"g1", "g2"} {
		for _, topic := range []string{"T", "K", "TT"} {
			if err := s.CommitOffset(g, topic, 1, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.DeleteTopic("T"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Topic("T"); ok {
		t.Fatal("config survived")
	}
	// Every group's offsets of T are gone; other topics' stay (TT shares
	// T's prefix).
	for _, g := range []string{"g1", "g2"} {
		if _, ok, _ := s.ConsumerOffset(g, "T", 1); ok {
			t.Fatalf("%s's offset of the deleted topic survived", g)
		}
		for _, topic := range []string{"K", "TT"} {
			if off, ok, _ := s.ConsumerOffset(g, topic, 1); !ok || off != 1 {
				t.Fatalf("%s's offset of %s lost with T", g, topic)
			}
		}
	}
	if r, _ := s.Get("T", 0, 0, 32, 0, nil); r.Status != GetNoMessageInQueue {
		t.Fatalf("deleted queue: %v", r.Status)
	}
	if r := mustPut(t, s, msg("T", 0, "again")); r[0].QueueOffset != 0 {
		t.Fatalf("recreated queue starts at %d", r[0].QueueOffset)
	}
	if r, _ := s.Get("K", 0, 0, 32, 0, nil); r.Count != 1 {
		t.Fatal("other topic lost")
	}
	rep, err := s.Verify()
	if err != nil || rep.Orphans != 2 {
		t.Fatalf("verify after delete: %+v %v", rep, err)
	}
}

func TestReopen(t *testing.T) {
	s, clock, fs := openMem(t)
	var last []PutResult
	for i := 0; i < 50; i++ {
		last = mustPut(t, s, msg("T", int32(i%3), fmt.Sprint(i)), msg("U", 0, fmt.Sprint(i)))
	}
	minA, maxPhys := s.MaxOffset("T", 0), s.MaxPhysOffset()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("T", 0, 0, 1, 0, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
	if _, err := s.Put([]*message.MessageExt{msg("T", 0, "x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("put after close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	s = mustOpen(t, memOptions(fs, clock))
	if s.MaxOffset("T", 0) != minA || s.MaxPhysOffset() != maxPhys || s.MaxOffset("U", 0) != 50 {
		t.Fatalf("after reopen: T0 %d phys %d U %d", s.MaxOffset("T", 0), s.MaxPhysOffset(), s.MaxOffset("U", 0))
	}
	r := mustPut(t, s, msg("U", 0, "next"))
	if r[0].QueueOffset != 50 || r[0].CommitLogOffset != maxPhys || r[0].StoreTimestamp < last[0].StoreTimestamp {
		t.Fatalf("append after reopen: %+v", r[0])
	}
	if _, err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestArrivalHookAfterReadable(t *testing.T) {
	fs := vfs.NewMem()
	var s *Store
	type arrival struct {
		topic string
		q     int32
		max   int64
	}
	var mu sync.Mutex
	var got []arrival
	opts := memOptions(fs, fakeclock.New(t0))
	opts.OnArrival = func(topic string, q int32, max int64) {
		// The data must already be readable when the hook runs.
		r, err := s.Get(topic, q, max-1, 1, 0, nil)
		if err != nil || r.Status != GetFound {
			t.Errorf("hook saw %v %v", r.Status, err)
		}
		mu.Lock()
		got = append(got, arrival{topic, q, max})
		mu.Unlock()
	}
	s = mustOpen(t, opts)
	mustPut(t, s, msg("T", 0, "a"), msg("T", 0, "b"), msg("T", 2, "c"))
	_ = s.CommitOffset("g", "T", 0, 1) // not an arrival
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("arrivals %v", got)
	}
	want := map[arrival]bool{{"T", 0, 2}: true, {"T", 2, 1}: true}
	for _, a := range got {
		if !want[a] {
			t.Errorf("unexpected arrival %v", a)
		}
	}
}

func TestConcurrentWriters(t *testing.T) {
	for _, mode := range []FlushMode{AsyncFlush, SyncFlush} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := memOptions(fs, fakeclock.New(t0))
			opts.FlushMode = mode
			opts.FlushInterval = time.Millisecond // exercise the background fsync
			s := mustOpen(t, opts)
			var wg sync.WaitGroup
			seen := make([]map[int64]bool, 4)
			for w := 0; w < 4; w++ {
				seen[w] = map[int64]bool{}
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; i < 100; i++ {
						r, err := s.Put([]*message.MessageExt{msg("T", int32(w%2), "x"), msg("T", int32(w%2), "y")})
						if err != nil {
							t.Error(err)
							return
						}
						seen[w][r[0].QueueOffset] = true
						if r[1].QueueOffset != r[0].QueueOffset+1 {
							t.Errorf("batch not consecutive: %+v", r)
						}
					}
				}(w)
			}
			wg.Wait()
			if s.MaxOffset("T", 0) != 400 || s.MaxOffset("T", 1) != 400 {
				t.Fatalf("max offsets %d %d", s.MaxOffset("T", 0), s.MaxOffset("T", 1))
			}
			rep, err := s.Verify()
			if err != nil || rep.Records != 800 || rep.Orphans != 0 {
				t.Fatalf("%+v %v", rep, err)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	d := DefaultOptions("x")
	if d.FlushInterval != 500*time.Millisecond || d.FileReservedTime != 72*time.Hour || d.MaxTransferCount != 32 {
		t.Fatalf("defaults %+v", d)
	}
	bad := []func(o *Options){
		func(o *Options) { o.Dir = "" },
		func(o *Options) { o.FlushMode = 9 },
		func(o *Options) { o.DiskBudget = -1 },
		func(o *Options) { o.MemTableSize = 10 },
	}
	for i, f := range bad {
		o := DefaultOptions("x")
		f(&o)
		if err := o.Validate(); !errors.Is(err, ErrBadOptions) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if m, err := ParseFlushMode("SYNC_FLUSH"); err != nil || m != SyncFlush {
		t.Fatal(m, err)
	}
	if _, err := ParseFlushMode("sometimes"); err == nil {
		t.Fatal("bad flush mode accepted")
	}
}
