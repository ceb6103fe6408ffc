package store

import (
	"github.com/runnelmq/runnel/internal/testwait"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
)

// gateFS blocks the syncs of the log database's WAL files while armed: a
// batch is then visible in Pebble but not yet published by the store.
type gateFS struct {
	vfs.FS
	armed atomic.Bool
	gate  chan struct{}
	once  sync.Once
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

// While a truncation's deletions are visible but not yet published (its
// fsync pending), a Get at the old minimum must move the consumer on to
// the first message left, not answer NO_MATCHED_MESSAGE where it stands
// (which a review found: the queue's chunks were gone, its minimum not yet
// raised). A truncation now raises the minimums before anything is
// deleted; without that, this Get finds no entry and stops.
func TestGetDuringRetentionWindow(t *testing.T) {
	s, gfs := openGated(t)
	var r []PutResult
	for i := 0; i < 192; i++ {
		r = append(r, mustPut(t, s, msg("T", 0, "body"))...)
	}
	// Truncate to the record of offset 130: chunks 0 and 64 go.
	op := &Op{Kind: OpTruncate, Cutoff: r[130].CommitLogOffset}
	gfs.armed.Store(true)
	done := make(chan error)
	go func() { _, err := s.Apply(op); done <- err }()
	testwait.For(t, testwait.Default, "the truncation to become visible", func() bool {
		_, err := commitlog.Read(s.log, r[0].CommitLogOffset)
		return err != nil
	})
	res, err := s.Get("T", 0, 5, 8, 1<<20, nil)
	gfs.open()
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
	s, gfs := openGated(t)
	mustPut(t, s, msg("T", 0, "durable"))
	before := s.MaxPhysOffset()
	gfs.armed.Store(true)
	done := make(chan error)
	go func() { _, err := s.Put([]*message.MessageExt{msg("T", 0, "waits for its sync")}); done <- err }()
	testwait.For(t, testwait.Default, "the append to wait for its sync", func() bool {
		s.applyMu.Lock()
		defer s.applyMu.Unlock()
		return s.nextPhys > before
	})
	err := s.CommitOffset("g", "T", 0, 1)
	readable, max := s.MaxPhysOffset(), s.MaxOffset("T", 0)
	gfs.open()
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

// openGated opens a SyncFlush store whose log WAL syncs block while its
// gate is armed. The gate opens at cleanup at the latest, so a test that
// fails with it armed does not hang.
func openGated(t *testing.T) (*Store, *gateFS) {
	t.Helper()
	gfs := &gateFS{FS: vfs.NewMem(), gate: make(chan struct{})}
	opts := memOptions(gfs, fakeclock.New(t0))
	opts.FlushMode = SyncFlush
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		gfs.open()
		_ = s.Close()
	})
	return s, gfs
}

// open disarms the gate and lets every waiting sync through.
func (fs *gateFS) open() {
	fs.armed.Store(false)
	fs.once.Do(func() { close(fs.gate) })
}
