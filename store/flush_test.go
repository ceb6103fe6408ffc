package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
)

// syncCountFS counts the syncs that reach WAL files and can make each one
// slow, as a disk would.
type syncCountFS struct {
	vfs.FS
	delay    time.Duration
	walSyncs atomic.Int64
}

type syncCountFile struct {
	vfs.File
	fs *syncCountFS
}

func (fs *syncCountFS) wrap(f vfs.File, err error, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err != nil || category != "pebble-wal" {
		return f, err
	}
	return &syncCountFile{File: f, fs: fs}, nil
}

func (fs *syncCountFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(f, err, category)
}

func (fs *syncCountFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(f, err, category)
}

func (f *syncCountFile) count() {
	if f.fs.delay > 0 {
		time.Sleep(f.fs.delay) // a slow disk, not synchronisation
	}
	f.fs.walSyncs.Add(1)
}

func (f *syncCountFile) Sync() error     { err := f.File.Sync(); f.count(); return err }
func (f *syncCountFile) SyncData() error { err := f.File.SyncData(); f.count(); return err }
func (f *syncCountFile) SyncTo(n int64) (bool, error) {
	full, err := f.File.SyncTo(n)
	f.count()
	return full, err
}

// SYNC_FLUSH: concurrent writers share fsyncs (group commit), so N
// concurrent single-message puts cost fewer than N WAL syncs even though
// each is acknowledged only after one. ASYNC_FLUSH writes cost none.
func TestGroupCommit(t *testing.T) {
	const writers = 32
	for _, mode := range []FlushMode{SyncFlush, AsyncFlush} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := &syncCountFS{FS: vfs.NewMem(), delay: 2 * time.Millisecond}
			opts := memOptions(fs, fakeclock.New(t0))
			opts.FlushMode = mode
			s := mustOpen(t, opts)
			before := fs.walSyncs.Load()
			start := make(chan struct{})
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					<-start
					if _, err := s.Put([]*message.MessageExt{msg("T", int32(w%4), fmt.Sprint(w))}); err != nil {
						t.Error(err)
					}
				}(w)
			}
			close(start)
			wg.Wait()
			syncs := fs.walSyncs.Load() - before
			t.Logf("%d concurrent puts, %d WAL syncs", writers, syncs)
			switch {
			case mode == SyncFlush && (syncs < 1 || syncs >= writers):
				t.Fatalf("%d WAL syncs for %d concurrent SYNC_FLUSH puts, want between 1 and %d", syncs, writers, writers-1)
			case mode == AsyncFlush && syncs != 0:
				t.Fatalf("%d WAL syncs for ASYNC_FLUSH puts with the flusher off, want 0", syncs)
			}
		})
	}
}

// ASYNC_FLUSH: the background flusher fsyncs the WAL within FlushInterval
// without anyone calling Flush, so acknowledged writes survive an OS crash
// (a clone keeping only synced data) once it has run. Without the flusher
// the same writes are lost, which shows the crash is real.
func TestBackgroundFlush(t *testing.T) {
	for _, interval := range []time.Duration{time.Millisecond, -1} {
		t.Run(fmt.Sprint("interval=", interval), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			fs := &syncCountFS{FS: mem}
			opts := memOptions(fs, fakeclock.New(t0))
			opts.FlushMode = AsyncFlush
			opts.FlushInterval = interval
			s, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			var acked []PutResult
			for i := 0; i < 20; i++ {
				acked = append(acked, mustPut(t, s, msg("T", 0, fmt.Sprint(i)))...)
			}
			if interval > 0 {
				// Two syncs completed after the acks: the second began after
				// they were all acknowledged.
				want := fs.walSyncs.Load() + 2
				deadline := time.Now().Add(30 * time.Second)
				for fs.walSyncs.Load() < want {
					if time.Now().After(deadline) {
						t.Fatal("the background flusher never synced the WAL")
					}
					time.Sleep(100 * time.Microsecond) // polling a counter
				}
			}
			crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			opts.FS = crashed
			s, err = Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if rep, err := s.Verify(); err != nil {
				t.Fatalf("%+v %v", rep, err)
			}
			survived := s.MaxOffset("T", 0)
			if interval > 0 && survived != int64(len(acked)) {
				t.Fatalf("%d of %d acknowledged writes survived an OS crash after the flusher ran", survived, len(acked))
			}
			if interval < 0 && survived == int64(len(acked)) {
				t.Fatalf("all %d unsynced writes survived an OS crash: the crash does not drop unsynced data", survived)
			}
		})
	}
}
