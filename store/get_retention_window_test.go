package store

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store/commitlog"
)

// gateFS blocks WAL syncs while armed: a batch is then visible in Pebble
// but not yet published by the store.
type gateFS struct {
	vfs.FS
	armed atomic.Bool
	gate  chan struct{}
}

func (fs *gateFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil || c != "pebble-wal" || !strings.Contains(name, "log/") {
		return f, err
	}
	return &gateFile{File: f, fs: fs}, nil
}

func (fs *gateFS) ReuseForWrite(o, n string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(o, n, c)
	if err != nil || c != "pebble-wal" || !strings.Contains(n, "log/") {
		return f, err
	}
	return &gateFile{File: f, fs: fs}, nil
}

type gateFile struct {
	vfs.File
	fs *gateFS
}

func (f *gateFile) wait() {
	if f.fs.armed.Load() {
		<-f.fs.gate
	}
}
func (f *gateFile) Sync() error                  { f.wait(); return f.File.Sync() }
func (f *gateFile) SyncData() error              { f.wait(); return f.File.SyncData() }
func (f *gateFile) SyncTo(n int64) (bool, error) { f.wait(); return f.File.SyncTo(n) }

// While a truncation's log deletion is visible but not yet published (its
// fsync pending), a Get at the old minimum must move the consumer on to
// the first message left, not answer NO_MATCHED_MESSAGE where it stands
// (which a review found: the queue's chunks were gone, its minimum not yet
// raised).
func TestGetDuringRetentionWindow(t *testing.T) {
	gfs := &gateFS{FS: vfs.NewMem(), gate: make(chan struct{})}
	opts := memOptions(gfs, fakeclock.New(t0))
	opts.FlushMode = SyncFlush
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var r []PutResult
	for i := 0; i < 192; i++ {
		r = append(r, mustPut(t, s, msg("T", 0, "body"))...)
	}
	// Truncate to the record of offset 130: chunks 0 and 64 go.
	op := &Op{Kind: OpTruncate, Cutoff: r[130].CommitLogOffset}
	gfs.armed.Store(true)
	done := make(chan error)
	go func() { _, err := s.Apply(op); done <- err }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := commitlog.Read(s.log, r[0].CommitLogOffset); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("truncation never became visible")
		}
		time.Sleep(time.Millisecond)
	}
	res, err := s.Get("T", 0, 5, 8, 1<<20, nil)
	gfs.armed.Store(false)
	close(gfs.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("min %d, status %v, count %d, next %d", s.MinOffset("T", 0), res.Status, res.Count, res.NextBeginOffset)
	// Either answer moves the consumer on to the first message left; the
	// wrong one (before a fix) was NO_MATCHED_MESSAGE at offset 5.
	found := res.Status == GetFound && res.Count > 0 && res.QueueOffsets[0] == 130
	moved := res.Status == GetOffsetTooSmall && res.NextBeginOffset == 130
	if !found && !moved {
		t.Fatalf("Get during the window: %v, %d messages, next %d (offsets %v)", res.Status, res.Count, res.NextBeginOffset, res.QueueOffsets)
	}
}

// The log and the other writes are in two databases. A metadata op (an
// offset commit) that completes while an append still waits for its log
// sync must not make that append readable: only the log's own sync says
// the log is durable (found by the SIGKILL crash test, where retention then
// cut below its budget).
func TestMetadataOpDoesNotPublishPendingAppend(t *testing.T) {
	gfs := &gateFS{FS: vfs.NewMem(), gate: make(chan struct{})}
	opts := memOptions(gfs, fakeclock.New(t0))
	opts.FlushMode = SyncFlush
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustPut(t, s, msg("T", 0, "durable"))
	before := s.MaxPhysOffset()
	gfs.armed.Store(true)
	done := make(chan error)
	go func() { _, err := s.Put([]*protocol.MessageExt{msg("T", 0, "waits for its sync")}); done <- err }()
	deadline := time.Now().Add(5 * time.Second)
	for { // until the append is applied and waits for its sync
		s.applyMu.Lock()
		next := s.nextPhys
		s.applyMu.Unlock()
		if next > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the append never reached Pebble")
		}
		time.Sleep(time.Millisecond)
	}
	err = s.CommitOffset("g", "T", 0, 1)
	readable, max := s.MaxPhysOffset(), s.MaxOffset("T", 0)
	gfs.armed.Store(false)
	close(gfs.gate)
	if perr := <-done; perr != nil {
		t.Fatal(perr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if readable != before || max != 1 {
		t.Fatalf("while the append waited for its sync: log readable to %d (durable to %d), queue max %d", readable, before, max)
	}
}
