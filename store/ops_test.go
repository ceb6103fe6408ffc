package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store/meta"
)

// sampleOps is one op of every kind, each as a store would accept it.
func sampleOps(t testing.TB) []*Op {
	ts := t0.UnixMilli()
	rec := func(m *protocol.MessageExt) AppendMessage {
		r, err := protocol.AppendStoredMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return AppendMessage{Record: r, Topic: m.Topic, QueueID: m.QueueID, TagsCode: protocol.TagsHashCode(m.Tags()),
			Keys: m.Keys(), UniqKey: m.UniqKey()}
	}
	return []*Op{
		{Kind: OpAppend, Timestamp: ts, Messages: []AppendMessage{
			rec(msg("T", 1, "one", protocol.PropertyKeys, "a b", protocol.PropertyTags, "t", protocol.PropertyUniqClientMessageIDKey, "u1")),
			rec(msg("U", 0, "two")),
		}},
		{Kind: OpCommitOffset, Offsets: []OffsetCommit{{"g", "T", 1, 7}, {"g", "U", 0, -1}, {"h", "T", 3, 1 << 40}}},
		{Kind: OpDeleteGroupOffsets, Group: "g"},
		{Kind: OpPutTopic, TopicConfig: &meta.TopicConfig{Name: "T", ReadQueueNums: 4, WriteQueueNums: 8, Perm: 6,
			TopicFilterType: "SINGLE_TAG", TopicSysFlag: 1, Order: true}},
		{Kind: OpDeleteTopic, Topic: "U"},
		{Kind: OpSetDelayOffset, Level: 3, Offset: 12},
		{Kind: OpPutCheckpoint, Name: "cp", Value: []byte{0, 1, 2}},
		{Kind: OpTruncate, Cutoff: 1234, QueueMins: map[QueueID]int64{{Topic: "T", ID: 1}: 5, {Topic: "A", ID: 0}: 2}},
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
		op, err := DecodeOp(b)
		if err != nil {
			if !errors.Is(err, ErrBadOp) {
				t.Fatalf("error not ErrBadOp: %v", err)
			}
			return
		}
		again, err := DecodeOp(op.Marshal())
		if err != nil {
			t.Fatalf("re-encoded op does not decode: %v", err)
		}
		if !bytes.Equal(again.Marshal(), op.Marshal()) {
			t.Fatal("re-encoded op decodes differently")
		}
	})
}

// CommitOffsets writes any number of offsets with one sync; CommitOffset
// one each. Stats counts what a caller above the store (a broker's
// persist tick) pays.
func TestCommitOffsetsIsOneSync(t *testing.T) {
	s, _, _ := openMem(t)
	var batch []OffsetCommit
	for i := 0; i < 200; i++ {
		batch = append(batch, OffsetCommit{Group: fmt.Sprint("g", i%7), Topic: fmt.Sprint("T", i%5), QueueID: int32(i), Offset: int64(i * 3)})
	}
	before := s.Stats().Syncs
	if err := s.CommitOffsets(batch); err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().Syncs - before; n != 1 {
		t.Fatalf("CommitOffsets of %d offsets: %d syncs, want 1", len(batch), n)
	}
	for _, c := range batch {
		if off, ok, err := s.ConsumerOffset(c.Group, c.Topic, c.QueueID); err != nil || !ok || off != c.Offset {
			t.Fatalf("%+v: read %d %v %v", c, off, ok, err)
		}
	}
	before = s.Stats().Syncs
	for _, c := range batch[:10] {
		if err := s.CommitOffset(c.Group, c.Topic, c.QueueID, c.Offset+1); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Stats().Syncs - before; n != 10 {
		t.Fatalf("10 CommitOffset calls: %d syncs, want 10", n)
	}
	before = s.Stats().Syncs
	if err := s.CommitOffsets(nil); err != nil || s.Stats().Syncs != before {
		t.Fatalf("committing nothing: %v, %d syncs", err, s.Stats().Syncs-before)
	}
	bad := append(batch[:1:1], OffsetCommit{Group: "", Topic: "T"})
	if err := s.CommitOffsets(bad); !errors.Is(err, ErrInvalidOp) {
		t.Fatalf("a commit without a group: %v", err)
	}
	if off, _, _ := s.ConsumerOffset(batch[0].Group, batch[0].Topic, batch[0].QueueID); off != batch[0].Offset+1 {
		t.Fatalf("a refused batch wrote its valid part: offset %d", off)
	}
}

// Put and ApplyEncoded of AppendOp's encoding, with the same clock, leave
// byte-identical stores and the same offsets: Put is the encoded op's
// local shortcut, not a path of its own.
func TestPutIsItsAppendOp(t *testing.T) {
	open := func() *Store {
		s, err := Open(memOptions(vfs.NewMem(), fakeclock.New(t0)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(), open()
	for i := 0; i < 300; i++ {
		var ms []*protocol.MessageExt
		for j := 0; j <= i%4; j++ {
			m := msg(fmt.Sprint("T", j%2), int32(i%3), fmt.Sprint("body", i, j), protocol.PropertyKeys, fmt.Sprint("k", i%9),
				protocol.PropertyTags, fmt.Sprint("t", j), protocol.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i, j))
			if j == 1 {
				m.StoreHost = netip.AddrPort{} // the store's own host goes in
			}
			ms = append(ms, m)
		}
		pr, err := a.Put(ms)
		if err != nil {
			t.Fatal(err)
		}
		op, err := b.AppendOp(ms)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.ApplyEncoded(op.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range pr {
			g := r.Appended[k]
			if p.QueueOffset != g.QueueOffset || p.CommitLogOffset != g.PhysOffset || p.Size != g.Size || p.StoreTimestamp != g.StoreTimestamp {
				t.Fatalf("message %d/%d: Put %+v, encoded op %+v", i, k, p, g)
			}
		}
	}
	n := sameKeys(t, a, b)
	sameReads(t, a, b)
	t.Logf("%d identical keys", n)
}

// A random sequence of ops of every kind, encoded, applied to two fresh
// stores (the first deciding valid truncation cutoffs as it goes), leaves
// byte-identical databases and the same results.
func TestEncodedOpsAreDeterministic(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	open := func(mode FlushMode) *Store {
		opts := memOptions(vfs.NewMem(), fakeclock.New(t0))
		opts.FlushMode = mode
		s, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(SyncFlush), open(AsyncFlush)
	g := newOpGen(t, rng)
	var encoded [][]byte
	var results []*ApplyResult
	for i := 0; i < 1500; i++ {
		enc := g.next(a).Marshal()
		r, err := a.ApplyEncoded(enc)
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		g.applied(r)
		encoded, results = append(encoded, enc), append(results, r)
	}
	for i, enc := range encoded {
		r, err := b.ApplyEncoded(enc)
		if err != nil {
			t.Fatalf("replay op %d: %v", i, err)
		}
		if !reflect.DeepEqual(r, results[i]) {
			t.Fatalf("op %d: result %+v, first store %+v", i, r, results[i])
		}
	}
	if g.truncations == 0 || a.MinPhysOffset() == 0 {
		t.Fatalf("the sequence never truncated (%d truncations)", g.truncations)
	}
	t.Logf("%d ops, %d truncations, %d identical keys", len(encoded), g.truncations, sameKeys(t, a, b))
	sameReads(t, a, b)
}

// opGen generates valid ops at random.
type opGen struct {
	t           testing.TB
	rng         *rand.Rand
	ts          int64
	phys        []int64 // physical offsets of appended records, in order
	truncations int
}

func newOpGen(t testing.TB, rng *rand.Rand) *opGen {
	return &opGen{t: t, rng: rng, ts: t0.UnixMilli()}
}

var genTopics = []string{"A", "B", "C", "D"}

func (g *opGen) next(s *Store) *Op {
	r := g.rng
	g.ts += int64(r.IntN(5)) - 1
	switch k := r.IntN(100); {
	case k < 70:
		var ms []*protocol.MessageExt
		for j := r.IntN(4); j >= 0; j-- {
			i := r.IntN(1000)
			ms = append(ms, msg(genTopics[r.IntN(len(genTopics))], int32(r.IntN(4)), fmt.Sprint("m", i, string(make([]byte, r.IntN(300)))),
				protocol.PropertyKeys, fmt.Sprintf("k%d k%d", i%10, i%3), protocol.PropertyTags, fmt.Sprint("t", i%3),
				protocol.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i)))
		}
		return appendOp(g.t, g.ts, ms...)
	case k < 80:
		var cs []OffsetCommit
		for j := r.IntN(20); j >= 0; j-- {
			cs = append(cs, OffsetCommit{Group: fmt.Sprint("g", r.IntN(3)), Topic: genTopics[r.IntN(len(genTopics))], QueueID: int32(r.IntN(4)), Offset: r.Int64N(1000)})
		}
		return &Op{Kind: OpCommitOffset, Offsets: cs}
	case k < 84:
		return &Op{Kind: OpPutTopic, TopicConfig: &meta.TopicConfig{Name: genTopics[r.IntN(len(genTopics))], ReadQueueNums: 4, WriteQueueNums: int32(r.IntN(8)), Perm: 6, Order: r.IntN(2) == 0}}
	case k < 86:
		return &Op{Kind: OpDeleteTopic, Topic: genTopics[r.IntN(len(genTopics))]}
	case k < 88:
		return &Op{Kind: OpDeleteGroupOffsets, Group: fmt.Sprint("g", r.IntN(3))}
	case k < 92:
		return &Op{Kind: OpSetDelayOffset, Level: int32(r.IntN(18)), Offset: r.Int64N(100)}
	case k < 96:
		return &Op{Kind: OpPutCheckpoint, Name: fmt.Sprint("cp", r.IntN(3)), Value: []byte(fmt.Sprint(r.Int()))}
	default:
		// A record boundary above the log's start, from what was appended.
		min := s.MinPhysOffset()
		var live []int64
		for _, p := range g.phys {
			if p > min {
				live = append(live, p)
			}
		}
		if len(live) < 10 {
			return &Op{Kind: OpSetDelayOffset, Level: 1, Offset: 1}
		}
		g.truncations++
		return &Op{Kind: OpTruncate, Cutoff: live[r.IntN(len(live)/4)]}
	}
}

func (g *opGen) applied(r *ApplyResult) {
	for _, a := range r.Appended {
		g.phys = append(g.phys, a.PhysOffset)
	}
}

// sameReads fails t unless a and b answer every read alike: each queue's
// range, every message by queue offset and by physical offset, a Get over
// each queue, key and unique-key queries, offsets, topics, delay offsets
// and checkpoints.
func sameReads(t *testing.T, a, b *Store) {
	t.Helper()
	if a.MinPhysOffset() != b.MinPhysOffset() || a.MaxPhysOffset() != b.MaxPhysOffset() {
		t.Fatalf("log [%d, %d) vs [%d, %d)", a.MinPhysOffset(), a.MaxPhysOffset(), b.MinPhysOffset(), b.MaxPhysOffset())
	}
	qa, qb := a.Queues(), b.Queues()
	if !reflect.DeepEqual(qa, qb) {
		t.Fatalf("queues %v vs %v", qa, qb)
	}
	check := func(what string, va, vb any, ea, eb error) {
		t.Helper()
		if (ea == nil) != (eb == nil) || !reflect.DeepEqual(va, vb) {
			t.Fatalf("%s: %v (%v) vs %v (%v)", what, va, ea, vb, eb)
		}
	}
	for id, r := range qa {
		if a.MinOffset(id.Topic, id.ID) != b.MinOffset(id.Topic, id.ID) || a.MaxOffset(id.Topic, id.ID) != b.MaxOffset(id.Topic, id.ID) {
			t.Fatalf("%v: min/max offsets differ", id)
		}
		got := 0
		for off := r.Min; off < r.Max; {
			ga, ea := a.Get(id.Topic, id.ID, off, 1<<20, 1<<30, nil)
			gb, eb := b.Get(id.Topic, id.ID, off, 1<<20, 1<<30, nil)
			check(fmt.Sprint("Get ", id, off), ga, gb, ea, eb)
			if ea != nil || ga.NextBeginOffset <= off {
				t.Fatalf("Get %v from %d: %+v %v", id, off, ga, ea)
			}
			got += ga.Count
			off = ga.NextBeginOffset
		}
		if int64(got) != r.Max-r.Min {
			t.Fatalf("Gets over %v: %d messages, the queue holds %d", id, got, r.Max-r.Min)
		}
		for off := r.Min; off < r.Max; off++ {
			xa, ea := a.QueueEntry(id.Topic, id.ID, off)
			xb, eb := b.QueueEntry(id.Topic, id.ID, off)
			check(fmt.Sprint("entry ", id, off), xa, xb, ea, eb)
			ra, ea := a.ReadRecord(xa.PhysOffset)
			rb, eb := b.ReadRecord(xa.PhysOffset)
			check(fmt.Sprint("record ", xa.PhysOffset), ra, rb, ea, eb)
		}
		oa, ea := a.OffsetByTime(id.Topic, id.ID, t0.UnixMilli()+100)
		ob, eb := b.OffsetByTime(id.Topic, id.ID, t0.UnixMilli()+100)
		check(fmt.Sprint("offset by time ", id), oa, ob, ea, eb)
	}
	for _, topic := range append(genTopics, "T0", "T1") {
		for i := 0; i < 10; i++ {
			ka, ea := a.QueryByKey(topic, fmt.Sprint("k", i), 1000, 0, 0)
			kb, eb := b.QueryByKey(topic, fmt.Sprint("k", i), 1000, 0, 0)
			check(fmt.Sprint("key query ", topic, i), ka, kb, ea, eb)
			ua, ea := a.QueryByUniqKey(topic, fmt.Sprint("u", i*37), 10)
			ub, eb := b.QueryByUniqKey(topic, fmt.Sprint("u", i*37), 10)
			check(fmt.Sprint("unique-key query ", topic, i), ua, ub, ea, eb)
		}
	}
	offsets := func(s *Store) []OffsetCommit {
		var out []OffsetCommit
		err := s.RangeConsumerOffsets(func(g, t string, q int32, o int64) bool {
			out = append(out, OffsetCommit{g, t, q, o})
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	check("consumer offsets", offsets(a), offsets(b), nil, nil)
	ta, ea := a.Topics()
	tb, eb := b.Topics()
	check("topics", ta, tb, ea, eb)
	da, ea := a.DelayOffsets()
	db, eb := b.DelayOffsets()
	check("delay offsets", da, db, ea, eb)
	for _, name := range []string{"cp", "cp0", "cp1", "cp2"} {
		va, oka, ea := a.Checkpoint(name)
		vb, okb, eb := b.Checkpoint(name)
		check("checkpoint "+name, []any{va, oka}, []any{vb, okb}, ea, eb)
	}
}

// A snapshot restored into a new directory answers every read as the
// original does, and stays so while both apply the same encoded ops. The
// original has messages over several topics and queues, offsets, topic
// configs, checkpoints, and a truncation behind it, and data only in
// memory (queue tails, the open index segment) when it is snapshotted.
func TestSnapshotRestore(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	a, err := Open(memOptions(vfs.NewMem(), fakeclock.New(t0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	g := newOpGen(t, rng)
	for i := 0; i < 800; i++ {
		r, err := a.ApplyEncoded(g.next(a).Marshal())
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		g.applied(r)
	}
	if _, err := a.ApplyEncoded(g.next(a).Marshal()); err != nil { // a last append, most likely only in memory
		t.Fatal(err)
	}
	if g.truncations == 0 || len(a.Queues()) < 4 {
		t.Fatalf("the store to snapshot has %d truncations, %d queues", g.truncations, len(a.Queues()))
	}
	var snap bytes.Buffer
	if err := a.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	opts := memOptions(vfs.NewMem(), fakeclock.New(t0))
	b, err := Restore(opts, bytes.NewReader(snap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	sameReads(t, a, b)
	sameKeys(t, a, b)
	if rep, err := b.Verify(); err != nil {
		t.Fatalf("restored store: %v (%+v)", err, rep)
	}
	for i := 0; i < 400; i++ {
		enc := g.next(a).Marshal()
		ra, err := a.ApplyEncoded(enc)
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		g.applied(ra)
		rb, err := b.ApplyEncoded(enc)
		if err != nil || !reflect.DeepEqual(ra, rb) {
			t.Fatalf("op %d on the restored store: %+v %v, original %+v", i, rb, err, ra)
		}
	}
	sameReads(t, a, b)
	// The restored store checkpoints where the original does, so it holds
	// the same bytes: it could be a raft follower.
	n := sameKeys(t, a, b)
	t.Logf("snapshot of %d bytes, %d identical keys after further ops", snap.Len(), n)
}

// Restore refuses a stream cut short, altered or extended, and a directory
// that already holds something, and leaves no database behind.
func TestRestoreRefusesBadSnapshots(t *testing.T) {
	s, _, _ := openMem(t)
	for i := 0; i < 50; i++ {
		mustPut(t, s, msg("T", int32(i%2), fmt.Sprint("m", i)))
	}
	if err := s.CommitOffset("g", "T", 0, 3); err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := s.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	full := snap.Bytes()
	flipped := append([]byte(nil), full...)
	flipped[len(flipped)/2] ^= 0x40
	cases := map[string][]byte{"empty": nil, "header only": full[:8], "flipped": flipped, "extended": append(append([]byte(nil), full...), 0)}
	for _, n := range []int{9, len(full) / 3, len(full) - 13, len(full) - 1} {
		cases[fmt.Sprint("cut to ", n)] = full[:n]
	}
	for name, b := range cases {
		fs := vfs.NewMem()
		r, err := Restore(memOptions(fs, fakeclock.New(t0)), bytes.NewReader(b))
		if !errors.Is(err, ErrBadSnapshot) {
			if r != nil {
				_ = r.Close()
			}
			t.Fatalf("%s: %v", name, err)
		}
		if names, _ := fs.List("db"); len(names) != 0 {
			t.Fatalf("%s: left %v", name, names)
		}
	}
	fs := vfs.NewMem()
	r, err := Restore(memOptions(fs, fakeclock.New(t0)), bytes.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(memOptions(fs, fakeclock.New(t0)), bytes.NewReader(full)); err == nil {
		t.Fatal("restored over an existing store")
	}
}

// Retention decided on one store (RetentionOp reads its clock and
// options) and applied encoded to it and to a replica without retention
// leaves the two byte-identical.
func TestRetentionOpReplicates(t *testing.T) {
	clock := fakeclock.New(t0)
	open := func(reserve time.Duration) *Store {
		opts := memOptions(vfs.NewMem(), clock)
		opts.FileReservedTime = reserve
		s, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := open(time.Hour), open(-1)
	for i := 0; i < 400; i++ {
		op, err := a.AppendOp([]*protocol.MessageExt{msg(fmt.Sprint("T", i%3), int32(i%2), fmt.Sprint("m", i), protocol.PropertyKeys, fmt.Sprint("k", i%10))})
		if err != nil {
			t.Fatal(err)
		}
		enc := op.Marshal()
		for _, s := range []*Store{a, b} {
			if _, err := s.ApplyEncoded(enc); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(30 * time.Second)
	}
	steps := 0
	for more := true; more; steps++ {
		var op *Op
		var err error
		op, more, err = a.RetentionOp(clock.Now())
		if err != nil || op == nil {
			t.Fatalf("retention op %d: %v %v", steps, op, err)
		}
		enc := op.Marshal()
		for _, s := range []*Store{a, b} {
			if _, err := s.ApplyEncoded(enc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if op, _, err := a.RetentionOp(clock.Now()); op != nil || err != nil {
		t.Fatalf("retention still due after it ran: %+v %v", op, err)
	}
	if a.MinPhysOffset() == 0 || a.MinOffset("T0", 0) == 0 {
		t.Fatalf("retention deleted nothing: log from %d", a.MinPhysOffset())
	}
	sameKeys(t, a, b)
	sameReads(t, a, b)
}
