package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/meta"
)

// Queue tails and the open index segment live in memory between
// checkpoints. After a kill -9 (a crash clone keeping every write that
// reached the filesystem) Open rebuilds them from the log: every entry and
// index lookup is back, queues continue where they were, and the rebuilt
// state is checkpointed at once.
func TestReopenRebuildsDerivedFromLog(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := memOptions(fs, fakeclock.New(t0))
	opts.CheckpointBytes = 1 << 30 // no checkpoint: only Open's replay can bring them back
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int{0: consumequeue.ChunkLen + 6, 1: 5, 2: 1} // queue 0 fills a chunk
	for q, n := range want {
		for i := 0; i < n; i++ {
			mustPut(t, s, msg("T", q, fmt.Sprintf("%d-%d", q, i), message.PropertyKeys, fmt.Sprintf("k%d-%d", q, i),
				message.PropertyUniqClientMessageIDKey, fmt.Sprintf("u%d-%d", q, i)))
		}
	}
	if d, _, _ := meta.GetInt64(s.db, derivedKey); d != 0 {
		t.Fatalf("a checkpoint was written (at %d); the test needs the tails in memory only", d)
	}
	end := s.MaxPhysOffset()
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 2))})
	_ = s.Close()

	opts.FS = crashed
	s, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep, err := s.Verify(); err != nil || rep.Entries != int64(want[0]+want[1]+want[2]) {
		t.Fatalf("%+v %v", rep, err)
	}
	if d, _, err := meta.GetInt64(s.db, derivedKey); err != nil || d != end {
		t.Fatalf("Open checkpointed at %d (%v), want %d", d, err, end)
	}
	for q, n := range want {
		if max := s.MaxOffset("T", q); max != int64(n) {
			t.Fatalf("queue %d ends at %d, want %d", q, max, n)
		}
		r, err := s.Get("T", q, 0, n, 1<<20, nil)
		if err != nil || r.Count != min(n, s.opts.MaxTransferCount) {
			t.Fatalf("queue %d: %+v %v", q, r, err)
		}
		last := n - 1
		if recs, err := s.QueryByKey("T", fmt.Sprintf("k%d-%d", q, last), 4, 0, 0); err != nil || len(recs) != 1 {
			t.Fatalf("key of %d/%d: %d records, %v", q, last, len(recs), err)
		}
		if recs, err := s.QueryByUniqKey("T", fmt.Sprintf("u%d-%d", q, last), 4); err != nil || len(recs) != 1 {
			t.Fatalf("unique key of %d/%d: %d records, %v", q, last, len(recs), err)
		}
	}
	if r := mustPut(t, s, msg("T", 1, "after")); r[0].QueueOffset != int64(want[1]) {
		t.Fatalf("queue 1 continued at %d, want %d", r[0].QueueOffset, want[1])
	}
}

// An append writes its records only; a checkpoint writes every chunk a
// queue's tail holds (several filled ones and an unfilled one here), and
// once it is published the tail keeps only the unfilled chunk.
func TestCheckpointWritesEveryChunkOfATail(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := memOptions(fs, fakeclock.New(t0))
	const n = 3*consumequeue.ChunkLen + 5
	size := message.StoredSize(msg("T", 0, "0000"))
	opts.CheckpointBytes = int64(n * size) // due with the n-th message
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	inPebble := func(off int64) bool {
		_, ok, err := consumequeue.Get(s.db, "T", 0, off)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := 0; i < n-1; i++ {
		mustPut(t, s, msg("T", 0, fmt.Sprintf("%04d", i)))
	}
	if inPebble(0) {
		t.Fatal("a filled chunk was written before the checkpoint")
	}
	if r, err := s.Get("T", 0, 0, n, 1<<20, nil); err != nil || r.Count != min(n-1, s.opts.MaxTransferCount) {
		t.Fatalf("from memory: %+v %v", r, err)
	}
	mustPut(t, s, msg("T", 0, fmt.Sprintf("%04d", n-1)))
	if d, _, err := meta.GetInt64(s.db, derivedKey); err != nil || d != s.MaxPhysOffset() {
		t.Fatalf("checkpoint at %d (%v), want %d", d, err, s.MaxPhysOffset())
	}
	for off := int64(0); off < n; off++ {
		if !inPebble(off) {
			t.Fatalf("entry %d is not in Pebble after the checkpoint", off)
		}
	}
	q := s.queue("T", 0)
	q.mu.RLock()
	start, kept := q.tailStart, len(q.tail)
	q.mu.RUnlock()
	if start != 3*consumequeue.ChunkLen || kept != 5 {
		t.Fatalf("tail keeps [%d, +%d), want the unfilled chunk [%d, +5)", start, kept, 3*consumequeue.ChunkLen)
	}
	for i := n; i < n+consumequeue.ChunkLen; i++ { // fills the chunk in memory only
		mustPut(t, s, msg("T", 0, fmt.Sprintf("%04d", i)))
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(3, 4))})
	_ = s.Close()
	opts.FS = crashed
	if s, err = Open(opts); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep, err := s.Verify(); err != nil || rep.Entries != n+consumequeue.ChunkLen {
		t.Fatalf("%+v %v", rep, err)
	}
	got := readAll(t, s, "T")
	if len(got) != n+consumequeue.ChunkLen {
		t.Fatalf("%d entries read, want %d", len(got), n+consumequeue.ChunkLen)
	}
	for i, b := range got {
		if b != fmt.Sprintf("%04d", i) {
			t.Fatalf("entry %d reads %q", i, b)
		}
	}
}

// A checkpoint is durable once the append that wrote it is acknowledged,
// so that after a crash Open replays at most the log written since: a
// crash clone keeping none of the unsynced writes still holds it.
func TestCheckpointIsDurableWithItsAppend(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := memOptions(fs, fakeclock.New(t0))
	opts.FlushMode = SyncFlush
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	var d int64
	for i := 0; d == 0; i++ {
		mustPut(t, s, msg("T", 0, fmt.Sprintf("%04d", i)))
		if d, _, err = meta.GetInt64(s.db, derivedKey); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	_ = s.Close()
	db, err := pebble.Open(crashed.PathJoin(opts.Dir, "meta"), &pebble.Options{FS: crashed, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, _, err := meta.GetInt64(db, derivedKey); err != nil || got != d {
		t.Fatalf("after the crash the last checkpoint is at %d (%v), want %d", got, err, d)
	}
}

// Lookups see index entries wherever they are: sealed segments in Pebble
// and the open one in memory, filtered by store time, oldest first.
func TestQueryAcrossSegments(t *testing.T) {
	s, clock, _ := openMem(t) // a checkpoint every 4 KiB: many segments
	var phys []int64
	for i := 0; i < 40 || s.openSeg.Dir.Entries == 0; i++ {
		clock.Advance(time.Second)
		body := strings.Repeat("b", 300)
		r := mustPut(t, s, msg("T", int32(i%2), body, message.PropertyKeys, "hot", message.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i)))
		phys = append(phys, r[0].CommitLogOffset)
	}
	if s.derivedPhys == 0 || s.openSeg.Dir.Entries == 0 {
		t.Fatalf("want sealed segments and an open one (checkpoint at %d, %d open entries)", s.derivedPhys, s.openSeg.Dir.Entries)
	}
	recs, err := s.QueryByKey("T", "hot", 100, 0, 0)
	if err != nil || len(recs) != len(phys) {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, rec := range recs {
		m, _, _ := message.DecodeStoredMessage(rec, false)
		if m.CommitLogOffset != phys[i] {
			t.Fatalf("record %d at %d, want %d: not oldest first", i, m.CommitLogOffset, phys[i])
		}
	}
	// Store times of messages 10..19.
	first, _, _ := message.DecodeStoredMessage(recs[10], false)
	last, _, _ := message.DecodeStoredMessage(recs[19], false)
	if r, err := s.QueryByKey("T", "hot", 100, first.StoreTimestamp, last.StoreTimestamp); err != nil || len(r) != 10 {
		t.Fatalf("time range: %d records, %v", len(r), err)
	}
	if r, err := s.QueryByKeyFrom("T", "hot", 100, phys[20]); err != nil || len(r) != len(phys)-20 {
		t.Fatalf("from the 21st record: %d records, %v", len(r), err)
	}
	if r, err := s.QueryByKey("T", "hot", 3, 0, 0); err != nil || len(r) != 3 {
		t.Fatalf("maxNum 3: %d records, %v", len(r), err)
	}
	if r, err := s.QueryByKey("Other", "hot", 3, 0, 0); err != nil || len(r) != 0 {
		t.Fatalf("another topic's key: %d records, %v", len(r), err)
	}
	if r, err := s.QueryByUniqKey("T", "u33", 3); err != nil || len(r) != 1 {
		t.Fatalf("unique key: %d records, %v", len(r), err)
	}
}

// A directory written by the layout with one key per queue entry is
// refused with a clear error, not misread.
func TestOlderFormatRefused(t *testing.T) {
	fs := vfs.NewMem()
	db, err := pebble.Open("db", &pebble.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Set(consumequeue.Key("T", 0, 1), make([]byte, consumequeue.EntrySize), pebble.Sync)
	_ = db.Close()
	_, err = Open(memOptions(fs, fakeclock.New(t0)))
	if !errors.Is(err, ErrOlderFormat) || !strings.Contains(err.Error(), "older Runnel store format") {
		t.Fatalf("Open: %v", err)
	}
}

// Recovery rebuilds queue and index entries from the records, so an
// OpAppend whose fields disagree with its record is refused: accepted, it
// would make the store after a crash differ from the store before it.
func TestApplyRefusesFieldsTheRecordContradicts(t *testing.T) {
	s, _, _ := openMem(t)
	rec, _ := message.AppendStoredMessage(nil, msg("T", 0, "says queue 0", message.PropertyTags, "a", message.PropertyKeys, "k1 k2"))
	good := AppendMessage{Record: rec, Topic: "T", QueueID: 0, TagsCode: message.TagsHashCode("a"), Keys: []string{"k1", "k2"}}
	for name, mutate := range map[string]func(*AppendMessage){
		"queue":  func(m *AppendMessage) { m.QueueID = 1 },
		"topic":  func(m *AppendMessage) { m.Topic = "U" },
		"tags":   func(m *AppendMessage) { m.TagsCode = 42 },
		"keys":   func(m *AppendMessage) { m.Keys = []string{"k1"} },
		"unique": func(m *AppendMessage) { m.UniqKey = "u" },
	} {
		m := good
		mutate(&m)
		if _, err := s.Apply(&Op{Kind: OpAppend, Messages: []AppendMessage{m}}); !errors.Is(err, ErrInvalidOp) {
			t.Errorf("%s: %v, want ErrInvalidOp", name, err)
		}
	}
	if _, err := s.Apply(&Op{Kind: OpAppend, Messages: []AppendMessage{good}}); err != nil {
		t.Fatal(err)
	}
	if max := s.MaxOffset("T", 0); max != 1 {
		t.Fatalf("T/0 ends at %d after one good append", max)
	}
}

// A truncation publishes its queues' new minimums after its sync; a queue
// deleted and re-created meanwhile keeps its own (found by a review: the
// new queue read [5, 5)).
func TestLateTruncatePublishSparesRecreatedQueue(t *testing.T) {
	s, _, _ := openMem(t)
	var phys []int64
	for i := 0; i < 10; i++ {
		phys = append(phys, mustPut(t, s, msg("T", 0, fmt.Sprint(i)))[0].CommitLogOffset)
	}
	op := &Op{Kind: OpTruncate, Cutoff: phys[5]}
	// Apply's steps by hand, with the topic's deletion and re-creation
	// between the batch entering Pebble and its publish.
	s.applyMu.Lock()
	mb, b := s.db.NewBatch(), s.log.NewBatch()
	_, p, err := s.buildLocked(mb, b, op)
	if err != nil {
		s.applyMu.Unlock()
		t.Fatal(err)
	}
	if err := s.db.Apply(mb, pebble.Sync); err != nil {
		s.applyMu.Unlock()
		t.Fatal(err)
	}
	if err := s.log.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		s.applyMu.Unlock()
		t.Fatal(err)
	}
	s.commitLocked(p)
	s.applyMu.Unlock()
	if err := s.DeleteTopic("T"); err != nil {
		t.Fatal(err)
	}
	if r := mustPut(t, s, msg("T", 0, "new")); r[0].QueueOffset != 0 {
		t.Fatal(r[0].QueueOffset)
	}
	_ = b.SyncWait()
	_ = b.Close()
	s.publish(op, p)
	if min, max := s.MinOffset("T", 0), s.MaxOffset("T", 0); min != 0 || max != 1 {
		t.Fatalf("re-created queue reads [%d, %d), want [0, 1)", min, max)
	}
}
