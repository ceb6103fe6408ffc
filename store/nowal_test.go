package store

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
)

// TestNoWALStoreIsTheSameStore: a store without a WAL (a replica's) given
// the same ops as one with a WAL answers alike and holds the same keys,
// while writing no WAL byte; a release that reopens it and a snapshot
// restored into another keep every op.
func TestNoWALStoreIsTheSameStore(t *testing.T) {
	rng := seededRand(t, 3)
	a := mustOpen(t, memOptions(vfs.NewMem(), fakeclock.New(t0)))
	t.Cleanup(func() { _ = a.Close() })
	fsB := vfs.NewMem()
	optsB := memOptions(fsB, fakeclock.New(t0))
	optsB.NoWAL = true
	b := mustOpen(t, optsB)
	t.Cleanup(func() { _ = b.Close() })

	g := newOpGen(t, rng)
	same := func(n int) {
		t.Helper()
		for i := range n {
			enc, ra := g.applyNext(a, i)
			rb, err := b.ApplyEncoded(enc)
			if err != nil || !reflect.DeepEqual(ra, rb) {
				t.Fatalf("op %d without a WAL: %+v %v, with one %+v", i, rb, err, ra)
			}
		}
		sameReads(t, a, b)
		sameKeys(t, a, b)
	}
	same(600)
	if g.truncations == 0 {
		t.Fatal("the ops truncated nothing")
	}
	if n := walBytes(t, fsB, optsB.Dir); n != 0 {
		t.Fatalf("the store without a WAL wrote %d bytes of WAL", n)
	}

	// The idle release reopens the databases: without a WAL, what the
	// memtables held must be flushed first or it is gone.
	reopenMinMemTables = 0
	t.Cleanup(func() { reopenMinMemTables = 2 << 20 })
	if err := b.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	if b.Reopens() != 1 {
		t.Fatalf("%d reopens", b.Reopens())
	}
	same(200)

	var snap bytes.Buffer
	if err := b.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	optsC := memOptions(vfs.NewMem(), fakeclock.New(t0))
	optsC.NoWAL = true
	c, err := Restore(optsC, bytes.NewReader(snap.Bytes()))
	if err != nil {
		t.Fatalf("restore without a WAL: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sameReads(t, b, c)
	sameKeys(t, b, c)
	if rep, err := c.Verify(); err != nil {
		t.Fatalf("restored store: %v (%+v)", err, rep)
	}
}

// TestNoWALOpensOnlyANewStore: a crash loses a store without a WAL, so
// Open without one refuses a directory that holds a store, even one closed
// cleanly; opened with a WAL, that clean one holds every write.
func TestNoWALOpensOnlyANewStore(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs, fakeclock.New(t0))
	opts.NoWAL = true
	s := mustOpen(t, opts)
	putBig(t, s, "T", 10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := Open(opts)
	if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), "holds one") {
		t.Fatalf("Open without a WAL of a used directory: %v", err)
	}
	opts.NoWAL = false
	s = mustOpen(t, opts) // cleanly closed, so whole
	if got := readAll(t, s, "T"); len(got) != 10 {
		t.Fatalf("%d messages after the clean close, want 10", len(got))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNoWALFlushSurvivesACrash: without a WAL a write is only in the
// memtables until Flush writes them to tables; what a crash leaves after a
// Flush holds every write before it, and the store counted no sync.
func TestNoWALFlushSurvivesACrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := memOptions(fs, fakeclock.New(t0))
	opts.NoWAL = true
	s := mustOpen(t, opts)
	t.Cleanup(func() { _ = s.Close() })
	putBig(t, s, "T", 20)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().Syncs; n != 0 {
		t.Fatalf("a store without a WAL counted %d syncs", n)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	opts.FS, opts.NoWAL = crashed, false
	c := mustOpen(t, opts)
	t.Cleanup(func() { _ = c.Close() })
	if got := readAll(t, c, "T"); len(got) != 20 {
		t.Fatalf("%d messages after a crash that followed Flush, want 20", len(got))
	}
}

// walBytes is the size of the WAL files under dir.
func walBytes(t *testing.T, fs vfs.FS, dir string) int64 {
	t.Helper()
	var n int64
	for _, sub := range []string{"log", "meta"} {
		d := fs.PathJoin(dir, sub)
		names, err := fs.List(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if !strings.HasSuffix(name, ".log") {
				continue
			}
			fi, err := fs.Stat(fs.PathJoin(d, name))
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}
