package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/store/commitlog"
)

// freeTest is a store whose log is 16 MiB in 1 MiB tables: the older half
// stored at t0, the younger half two hours later.
type freeTest struct {
	s     *Store
	clock *fakeclock.Clock
	rng   *rand.ChaCha8
}

const (
	freeMsg   = 64 << 10 // incompressible bodies, so tables measure the log
	freeTable = 16       // messages per flushed table
)

func newFreeTest(t *testing.T, proposed bool) *freeTest {
	t.Helper()
	clock := fakeclock.New(t0)
	o := memOptions(vfs.NewMem(), clock)
	o.FileReservedTime = time.Hour
	o.DiskCheckInterval = -1 // no disk check frees anything behind the test's back
	o.ProposedRetention = proposed
	f := &freeTest{s: mustOpen(t, o), clock: clock, rng: rand.NewChaCha8([32]byte{})}
	f.put(t, 256)
	clock.Set(t0.Add(2 * time.Hour))
	f.put(t, 256)
	return f
}

// put appends n messages, flushing the log every freeTable of them, as a
// busy log is in flushes.
func (f *freeTest) put(t *testing.T, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		body := make([]byte, freeMsg)
		_, _ = f.rng.Read(body)
		mustPut(t, f.s, msg("T", int32(i%4), string(body)))
		if i%freeTable == 0 {
			if err := f.s.log.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// logCompacted is what Pebble's compactions have written for the log.
func logCompacted(s *Store) (n uint64) {
	for _, l := range s.log.Metrics().Levels {
		n += l.TableBytesCompacted
	}
	return n
}

// waitFreed waits until the log's table files have shrunk by what was
// deleted, less one table (the one holding the cut keeps its file).
func waitFreed(t *testing.T, s *Store, before, deleted int64) {
	t.Helper()
	want := before - deleted + freeTable*freeMsg*11/10
	testwait.For(t, testwait.Default, fmt.Sprintf("%d deleted bytes freed from %d bytes of tables", deleted, before),
		func() bool { return logTableBytes(t, s) <= want })
}

// TestRetentionFreesAtOnce: ordinary retention (messages older than
// FileReservedTime, far below any disk ratio) frees what it deletes at
// once, the way forced cleaning does (freeLog), and leaves nothing for a
// compaction to rewrite. Before, its range tombstone freed nothing until
// the memtable's flush, and that flush's table spanned the whole live log,
// whose compaction rewrote it: 17 MiB compacted to free 16, the log's
// tables at 53 MiB meanwhile.
func TestRetentionFreesAtOnce(t *testing.T) {
	f := newFreeTest(t, false)
	s := f.s
	before, compacted := logTableBytes(t, s), logCompacted(s)
	n, err := s.Retain(t0.Add(time.Hour + time.Minute))
	if err != nil || n < 256*freeMsg || n > 257*freeMsg {
		t.Fatalf("retention deleted %d bytes (%v), want the older half, %d", n, err, 256*freeMsg)
	}
	// No append comes, so no flush: only the retention itself can free.
	waitFreed(t, s, before, n)

	// Appends go on and reach tables; the truncation left nothing behind
	// that one of their tables would overlap.
	f.put(t, 4*freeTable)
	lo := commitlog.Key(s.MinPhysOffset())
	levels, err := s.log.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	for l, tables := range levels {
		for _, tb := range tables {
			if bytes.Compare(tb.Smallest.UserKey, lo) < 0 {
				t.Errorf("L%d table %s starts at %x, below the log's start %x: a compaction will rewrite what it overlaps",
					l, tb.FileNum, tb.Smallest.UserKey, lo)
			}
		}
	}
	if c := logCompacted(s) - compacted; c > uint64(n)/8 {
		t.Errorf("Pebble compacted %d bytes of the log after retention deleted %d", c, n)
	}
}

// TestRetentionFreesProposed: a replica applies truncations its leader
// proposed (ProposedRetention, no Retain of its own); they are freed as
// they are applied, with no disk check to do it.
func TestRetentionFreesProposed(t *testing.T) {
	defer func(old int64) { truncateStep = old }(truncateStep)
	truncateStep = 4 << 20 // several proposals, as a leader makes them
	f := newFreeTest(t, true)
	s := f.s
	before := logTableBytes(t, s)
	now := t0.Add(time.Hour + time.Minute)
	ops := 0
	for more := true; more; ops++ {
		var op *Op
		var err error
		if op, more, err = s.RetentionOp(now); err != nil || op == nil {
			t.Fatalf("RetentionOp: %v, %v", op, err)
		}
		// As the replica's raft FSM applies them: encoded.
		if _, err := s.ApplyEncoded(op.Marshal()); err != nil {
			t.Fatal(err)
		}
	}
	if ops < 2 {
		t.Fatalf("%d proposals, want several", ops)
	}
	waitFreed(t, s, before, s.MinPhysOffset())
}
