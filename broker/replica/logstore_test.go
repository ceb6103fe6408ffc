package replica

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/store/faultfs"
)

// The Pebble log store keeps entries, first and last index, range
// deletions and stable keys across a reopen, as raft expects.
func TestLogStore(t *testing.T) {
	fs := vfs.NewMem()
	ls, err := openLogStore("raft", fs, false, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := ls.FirstIndex(); f != 0 {
		t.Fatalf("empty store's first index %d", f)
	}
	at := time.Unix(1_700_000_000, 5)
	var logs []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte{byte(i)}, Extensions: []byte("x"), AppendedAt: at})
	}
	if err := ls.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := ls.DeleteRange(1, 3); err != nil {
		t.Fatal(err)
	}
	if err := ls.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := ls.Set([]byte("LastVoteCand"), []byte("n1")); err != nil {
		t.Fatal(err)
	}
	if err := ls.Close(); err != nil {
		t.Fatal(err)
	}
	if ls, err = openLogStore("raft", fs, false, 0, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	first, _ := ls.FirstIndex()
	last, _ := ls.LastIndex()
	if first != 4 || last != 10 {
		t.Fatalf("index range %d..%d, want 4..10", first, last)
	}
	var l raft.Log
	if err := ls.GetLog(2, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("deleted entry: %v", err)
	}
	if err := ls.GetLog(5, &l); err != nil {
		t.Fatal(err)
	}
	if l.Index != 5 || l.Term != 2 || l.Type != raft.LogCommand || !bytes.Equal(l.Data, []byte{5}) || string(l.Extensions) != "x" || !l.AppendedAt.Equal(at) {
		t.Fatalf("entry 5 read back as %+v", l)
	}
	if v, _ := ls.GetUint64([]byte("CurrentTerm")); v != 7 {
		t.Fatalf("term %d", v)
	}
	if v, _ := ls.Get([]byte("LastVoteCand")); string(v) != "n1" {
		t.Fatalf("vote %q", v)
	}
	if v, err := ls.Get([]byte("missing")); v != nil || err != nil {
		t.Fatalf("missing key: %q %v", v, err)
	}
	if err := ls.DeleteRange(4, ^uint64(0)); err != nil {
		t.Fatal(err)
	}
	if last, _ := ls.LastIndex(); last != 0 {
		t.Fatalf("last index %d after deleting everything", last)
	}
}

// Every truncation of an entry's encoding is refused, not misread.
func TestLogDecodeTruncated(t *testing.T) {
	b := encodeLog(nil, &raft.Log{Term: 3, Type: raft.LogCommand, Data: []byte("data"), Extensions: []byte("e"), AppendedAt: time.Unix(1, 0)})
	for i := range len(b) {
		var l raft.Log
		if err := decodeLog(1, b[:i], &l); err == nil {
			t.Fatalf("%d of %d bytes decoded", i, len(b))
		}
	}
}

// Any bytes decode to an entry or an error, never a panic, and what
// decodes re-encodes to an entry that decodes alike.
func FuzzDecodeLog(f *testing.F) {
	f.Add(encodeLog(nil, &raft.Log{Term: 3, Type: raft.LogCommand, Data: []byte("data"), Extensions: []byte("e"), AppendedAt: time.Unix(1, 0)}))
	f.Add(encodeLog(nil, &raft.Log{Term: 1, Type: raft.LogConfiguration}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		if decodeLog(7, b, &l) != nil {
			return
		}
		var again raft.Log
		if err := decodeLog(7, encodeLog(nil, &l), &again); err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again.Term != l.Term || again.Type != l.Type || !bytes.Equal(again.Data, l.Data) ||
			!bytes.Equal(again.Extensions, l.Extensions) || !again.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("%+v re-decoded as %+v", l, again)
		}
	})
}

// Raft's reads of recent entries (the leader replicating to followers, a
// follower applying what it received) come from the log cache: after a
// run of writes the group's raft logs were read only to start up, not
// once per entry per follower.
func TestLogCacheServesReplication(t *testing.T) {
	g := newGroup(t, 3, nil)
	reads := func() (n int64) {
		for i := range 3 {
			n += g.node(i).logs.reads.Load()
		}
		return n
	}
	const writes = 40
	// A leader change on a loaded machine (a starved node missing its
	// lease) refuses the rest with ErrNotLeader and sends a new leader to
	// Pebble for what its cache never held: the count starts again under
	// the new leader.
	for attempt := 1; ; attempt++ {
		l := g.node(g.leader())
		before := reads()
		var err error
		for i := range writes {
			ctx, cancel := proposeCtx()
			_, err = l.Propose(ctx, appendOp(t, l, testMessage("C", 0, fmt.Sprint(attempt, i))))
			cancel()
			if err != nil {
				break
			}
		}
		if errors.Is(err, ErrNotLeader) && attempt < 5 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		g.converged()
		// Uncached, each entry is read at least three times (the leader
		// reads it for each follower, each follower to apply it).
		if got := reads() - before; got >= writes {
			t.Fatalf("%d raft log reads from Pebble for %d entries, want fewer than %d", got, writes, writes)
		}
		return
	}
}

// A raft log write that fails with ENOSPC is an error raft is handed, for
// entries, range deletions and stable keys alike: Pebble's plain synced
// commit exits the process instead (one log line, then os.Exit(1)).
func TestLogStoreWriteFailureIsAnError(t *testing.T) {
	fs := faultfs.New(vfs.NewMem(), 1<<30, 10)
	ls, err := openLogStore("raft", fs, false, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ls.Close() }()
	if err := ls.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	fs.FailWrites(true)
	for what, err := range map[string]error{
		"StoreLogs":   ls.StoreLogs([]*raft.Log{{Index: 2, Term: 1, Type: raft.LogCommand, Data: []byte("b")}}),
		"DeleteRange": ls.DeleteRange(1, 1),
		"Set":         ls.Set([]byte("CurrentTerm"), []byte("2")),
	} {
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s on a full disk: %v, want ENOSPC", what, err)
		}
	}
}

// With its fsyncs deferred (ASYNC_FLUSH), the raft log keeps what it
// stored through a process crash (every written byte survives) but owes
// the fsync until its flusher runs (an OS crash keeps only synced bytes),
// while term and vote are fsynced before Set returns: a node must never
// forget a vote, whatever crashes.
func TestLogStoreDeferredSync(t *testing.T) {
	mem := vfs.NewCrashableMem()
	ls, err := openLogStore("raft", mem, false, time.Hour, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ls.Close() }()
	if err := ls.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	process := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 2))})
	osCrash := mem.CrashClone(vfs.CrashCloneCfg{})
	if last := lastIndexIn(t, process); last != 1 {
		t.Errorf("after a process crash the log ends at %d, want 1", last)
	}
	if last := lastIndexIn(t, osCrash); last != 0 {
		t.Errorf("after an OS crash before the flusher ran the log ends at %d, want 0 (the test's premise: the write was not fsynced)", last)
	}
	if err := ls.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	// Set fsynced the WAL, with the entry before it in it.
	osCrash = mem.CrashClone(vfs.CrashCloneCfg{})
	after, err := openLogStore("raft", osCrash, false, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = after.Close() }()
	if term, err := after.GetUint64([]byte("CurrentTerm")); err != nil || term != 7 {
		t.Errorf("after an OS crash the term is %d, %v; want 7", term, err)
	}
	if last, err := after.LastIndex(); err != nil || last != 1 {
		t.Errorf("after an OS crash following Set the log ends at %d, %v; want 1", last, err)
	}
}

// lastIndexIn opens the raft log of fs and returns its last index.
func lastIndexIn(t *testing.T, fs vfs.FS) uint64 {
	t.Helper()
	ls, err := openLogStore("raft", fs, false, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ls.Close() }()
	last, err := ls.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return last
}
