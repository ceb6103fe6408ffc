package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

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
		var ms []*message.MessageExt
		for j := 0; j <= i%4; j++ {
			m := msg(fmt.Sprint("T", j%2), int32(i%3), fmt.Sprint("body", i, j), message.PropertyKeys, fmt.Sprint("k", i%9),
				message.PropertyTags, fmt.Sprint("t", j), message.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i, j))
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
	rng := seededRand(t, 1)
	open := func(mode FlushMode) *Store {
		opts := memOptions(vfs.NewMem(), fakeclock.New(t0))
		opts.FlushMode = mode
		s := mustOpen(t, opts)
		return s
	}
	a, b := open(SyncFlush), open(AsyncFlush)
	g := newOpGen(t, rng)
	var encoded [][]byte
	var results []*ApplyResult
	for i := 0; i < 1500; i++ {
		enc, r := g.applyNext(a, i)
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

// seededRand is a generator of a random seed the test logs, so that a
// failure can be run again with it; stream tells tests apart.
func seededRand(t testing.TB, stream uint64) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, stream))
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
		var ms []*message.MessageExt
		for j := r.IntN(4); j >= 0; j-- {
			i := r.IntN(1000)
			ms = append(ms, msg(genTopics[r.IntN(len(genTopics))], int32(r.IntN(4)), fmt.Sprint("m", i, string(make([]byte, r.IntN(300)))),
				message.PropertyKeys, fmt.Sprintf("k%d k%d", i%10, i%3), message.PropertyTags, fmt.Sprint("t", i%3),
				message.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i)))
		}
		return appendOp(g.t, g.ts, ms...)
	case k < 80:
		var cs []OffsetCommit
		for j := r.IntN(20); j >= 0; j-- {
			cs = append(cs, OffsetCommit{Group: fmt.Sprint("g", r.IntN(3)), Topic: genTopics[r.IntN(len(genTopics))], QueueID: int32(r.IntN(4)), Offset: r.Int64N(1000)})
		}
		return &Op{Kind: OpCommitOffset, Offsets: cs}
	case k < 84:
		return &Op{Kind: OpPutTopic, TopicConfig: &topicconf.Config{TopicName: genTopics[r.IntN(len(genTopics))], ReadQueueNums: 4, WriteQueueNums: r.IntN(8), Perm: 6, Order: r.IntN(2) == 0}}
	case k < 86:
		return &Op{Kind: OpDeleteTopic, Topic: genTopics[r.IntN(len(genTopics))]}
	case k < 88:
		return &Op{Kind: OpDeleteGroupOffsets, Group: fmt.Sprint("g", r.IntN(3))}
	case k < 92:
		return &Op{Kind: OpSetDelayOffset, Level: int32(r.IntN(18)), Offset: r.Int64N(100)}
	case k < 94:
		return &Op{Kind: OpPutCheckpoint, Name: fmt.Sprint("cp", r.IntN(3)), Value: []byte(fmt.Sprint(r.Int()))}
	case k < 95:
		return &Op{Kind: OpPutGroup, GroupConfig: &groupconf.Config{GroupName: fmt.Sprint("g", r.IntN(3)), ConsumeEnable: r.IntN(2) == 0, RetryMaxTimes: r.IntN(17)}}
	case k < 96:
		return &Op{Kind: OpDeleteGroup, Group: fmt.Sprint("g", r.IntN(3))}
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

// applyNext applies the next op, the i-th, to s encoded (as a replica
// does), and returns the op's encoding and what applying it did.
func (g *opGen) applyNext(s *Store, i int) ([]byte, *ApplyResult) {
	g.t.Helper()
	enc := g.next(s).Marshal()
	r, err := s.ApplyEncoded(enc)
	if err != nil {
		g.t.Fatalf("op %d: %v", i, err)
	}
	g.applied(r)
	return enc, r
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
			check(fmt.Sprint("Get ", id, off), readOf(ga), readOf(gb), ea, eb)
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
	ga, ea := a.Groups()
	gb, eb := b.Groups()
	check("group configs", ga, gb, ea, eb)
	da, ea := a.DelayOffsets()
	db, eb := b.DelayOffsets()
	check("delay offsets", da, db, ea, eb)
	for _, name := range []string{"cp", "cp0", "cp1", "cp2"} {
		va, oka, ea := a.Checkpoint(name)
		vb, okb, eb := b.Checkpoint(name)
		check("checkpoint "+name, []any{va, oka}, []any{vb, okb}, ea, eb)
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
		s := mustOpen(t, opts)
		return s
	}
	a, b := open(time.Hour), open(-1)
	for i := 0; i < 400; i++ {
		op, err := a.AppendOp([]*message.MessageExt{msg(fmt.Sprint("T", i%3), int32(i%2), fmt.Sprint("m", i), message.PropertyKeys, fmt.Sprint("k", i%10))})
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

// readOf is what a Get read, without the result's handles (its pooled
// buffer and its store), which differ between two stores reading alike.
func readOf(r *GetResult) *GetResult {
	if r == nil {
		return nil
	}
	c := *r
	c.pooled, c.store = nil, nil
	return &c
}
