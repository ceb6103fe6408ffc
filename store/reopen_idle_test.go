package store

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
)

// TestReleaseMemoryGivesBackMemtables: after a write load each database
// keeps two memtables of MemTableSize while it is open (Pebble grows the
// next one and keeps the last flushed for reuse); the release reopens the
// databases, which start with small ones, and the store reads and writes
// as before, and after a restart.
func TestReleaseMemoryGivesBackMemtables(t *testing.T) {
	fs := vfs.NewMem()
	opts := memOptions(fs, fakeclock.New(t0))
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	putBig(t, s, "T", 12000) // 12 MB: the log's memtable filled three times
	if err := s.log.Flush(); err != nil {
		t.Fatal(err)
	}
	before := s.MemTableBytes()
	if before < int64(opts.MemTableSize) {
		t.Fatalf("memtables hold %d bytes after 12 MB of writes, not even one of %d: the test loads too little", before, opts.MemTableSize)
	}
	if err := s.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	if s.Reopens() != 1 {
		t.Fatalf("%d reopens by an idle release", s.Reopens())
	}
	after := s.MemTableBytes()
	t.Logf("memtables: %d bytes before the release, %d after", before, after)
	// Opened again, each database has its first memtables: one of 256 KiB
	// that replayed the (empty) WAL, kept for reuse, and one of 512 KiB.
	if after > 2<<20 {
		t.Fatalf("memtables hold %d bytes after the release (%d before)", after, before)
	}
	if got := readAll(t, s, "T"); len(got) != 12000 {
		t.Fatalf("%d messages read after the release, want 12000", len(got))
	}
	mustPut(t, s, msg("T", 0, "after"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, opts)
	got := readAll(t, s2, "T")
	if len(got) != 12001 || got[12000] != "after" {
		t.Fatalf("after a restart: %d messages, last %q", len(got), got[len(got)-1])
	}
}

// TestReleaseMemoryKeepsSmallMemtables: a store that stored little has
// memtables as small as a reopen would leave them; its release only
// flushes them.
func TestReleaseMemoryKeepsSmallMemtables(t *testing.T) {
	s, _, _ := openMem(t)
	putBig(t, s, "T", 100)
	before := s.MemTableBytes()
	if err := s.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	// The flush leaves each database a new memtable of twice the size and
	// the flushed one for reuse: 1 MiB in all, below the 1.5 MiB of two
	// reopened databases.
	if s.Reopens() != 0 || s.MemTableBytes() > 1<<20 {
		t.Fatalf("%d reopens; memtables %d bytes before the release, %d after", s.Reopens(), before, s.MemTableBytes())
	}
	if got := readAll(t, s, "T"); len(got) != 100 {
		t.Fatalf("%d messages read after the release, want 100", len(got))
	}
}

// TestReleaseMemoryUnderTraffic: releases among writers and readers (run
// with -race) reopen the databases between their operations: every
// acknowledged message is read back once, in order, and no operation
// fails or meets a closed database.
func TestReleaseMemoryUnderTraffic(t *testing.T) {
	defer func(n int64) { reopenMinMemTables = n }(reopenMinMemTables)
	reopenMinMemTables = 0 // a reopen at every release that finds the lock free
	s, _, _ := openMem(t)
	var acked [3]atomic.Int64
	stop := runWriters(3, func(w, i int) bool {
		if _, err := s.Put(msgs1(fmt.Sprintf("T%d", w), fmt.Sprintf("%d", i))); err != nil {
			t.Errorf("put: %v", err)
			return false
		}
		acked[w].Add(1)
		time.Sleep(50 * time.Microsecond)
		return true
	})
	// A reader follows T0 until the writers stop.
	readErr := make(chan error, 1)
	stopRead := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for off := int64(0); ; {
			select {
			case <-stopRead:
				return
			default:
			}
			r, err := s.Get("T0", 0, off, 32, 1<<20, nil)
			if err != nil {
				readErr <- err
				return
			}
			off = r.NextBeginOffset
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for (s.Reopens() < 5 || acked[0].Load() < 3000) && time.Now().Before(deadline) {
		if err := s.ReleaseMemory(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	close(stopRead)
	<-readDone
	select {
	case err := <-readErr:
		t.Fatalf("get: %v", err)
	default:
	}
	if s.Reopens() == 0 {
		t.Fatal("no release reopened the databases among the writers in 20 s")
	}
	t.Logf("%d reopens", s.Reopens())
	for w := range acked {
		got := readAll(t, s, fmt.Sprintf("T%d", w))
		if int64(len(got)) != acked[w].Load() {
			t.Fatalf("T%d: %d messages read, %d acknowledged", w, len(got), acked[w].Load())
		}
		for i, b := range got {
			if b != fmt.Sprintf("%d", i) {
				t.Fatalf("T%d: message %d is %q", w, i, b)
			}
		}
	}
}

// failLockFS fails Pebble's directory lock while fail is set: a database
// that cannot be opened again.
type failLockFS struct {
	vfs.FS
	fail atomic.Bool
}

func (f *failLockFS) Lock(name string) (io.Closer, error) {
	if f.fail.Load() {
		return nil, errors.New("injected: cannot lock " + name)
	}
	return f.FS.Lock(name)
}

// TestReopenThatCannotOpenFailsTheStore: a release whose reopen cannot
// open the databases again latches the store failed: writes and reads say
// so (no panic on a closed database), Close returns, and a store opened
// again on the directory has everything acknowledged.
func TestReopenThatCannotOpenFailsTheStore(t *testing.T) {
	fs := &failLockFS{FS: vfs.NewMem()}
	opts := memOptions(fs, fakeclock.New(t0))
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	putBig(t, s, "T", 3000) // memtables worth a reopen
	fs.fail.Store(true)
	if err := s.ReleaseMemory(); !errors.Is(err, ErrFailed) {
		t.Fatalf("release whose reopen failed: %v, want ErrFailed", err)
	}
	if _, err := s.Put(msgs1("T", "x")); !errors.Is(err, ErrFailed) {
		t.Fatalf("put after a failed reopen: %v", err)
	}
	if _, err := s.Get("T", 0, 0, 32, 1<<20, nil); !errors.Is(err, ErrFailed) {
		t.Fatalf("get after a failed reopen: %v", err)
	}
	if err := s.ReleaseMemory(); !errors.Is(err, ErrFailed) {
		t.Fatalf("second release: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("close: %v", err)
	}
	fs.fail.Store(false)
	s2 := mustOpen(t, opts)
	if got := readAll(t, s2, "T"); len(got) != 3000 {
		t.Fatalf("%d messages after opening again, want 3000", len(got))
	}
}

// msgs1 is one message to queue 0 of topic.
func msgs1(topic, body string) []*message.MessageExt {
	return []*message.MessageExt{msg(topic, 0, body)}
}
