package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/migrate"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"

	"go.etcd.io/bbolt"

	"github.com/runnelmq/runnel/internal/periodic"
)

// ErrInUse is returned by New for a node directory another process holds.
var ErrInUse = errors.New("replica: node directory in use")

// raftLog is raft's LogStore and StableStore: hashicorp/raft-wal in the
// node's directory ("raftwal"). Entries are appended to segment files
// (64 MiB, preallocated) and a head truncation deletes whole files, so an
// entry is written once; the segment list and term and vote live in its
// bbolt meta file. It replaced a log in a Pebble database of its own
// (logStore), which wrote every entry three times or more (its WAL, a
// memtable flush, compactions): a third of a group's CPU per message
// (docs/performance-history.md, session 24). A node whose log is still in
// Pebble moves it over once, at its first start (migratePebbleLog).
//
// Durability is Config.LogNoSync's and LogSyncInterval's: by default each
// append is fsynced before raft is told it is stored; with
// LogSyncInterval the segment files' fsyncs are deferred to a flusher
// (deferFS), so an append is acknowledged from the page cache, which a
// process crash cannot take; the meta file is fsynced at every commit
// either way, and only after every segment write it may describe is
// fsynced (syncedMeta): an OS crash loses at most the last interval, never
// the files' agreement with their list. Term and vote are in the meta file,
// fsynced before raft is told they are stored.
//
// A failed write latches: raft-wal's writer may hold entries it did not
// write, so every later write returns the first error and onFail stops the
// node; a restart recovers the log from its files.
type raftLog struct {
	*raftwal.WAL
	fs       *deferFS
	meta     *syncedMeta
	stop     chan struct{}
	flushing sync.WaitGroup
	logger   hclog.Logger
	onFail   func(error)
	failed   atomic.Pointer[error]
	// writes and entries count StoreLogs calls and the entries they
	// carried (BenchmarkPropose); reads counts GetLog calls, which the
	// log cache should spare (TestLogCacheServesReplication).
	writes, entries, reads atomic.Int64
}

// walDir and pebbleLogDir are the raft log's directory under a node's Dir,
// and where an earlier build kept it.
const (
	walDir       = "raftwal"
	pebbleLogDir = "raft"
)

// openRaftLog opens the raft log under nodeDir, moving an earlier build's
// Pebble log over first. onFail, if set, is told of the first failed write.
func openRaftLog(nodeDir string, noSync bool, syncEvery time.Duration, logger hclog.Logger, onFail func(error)) (*raftLog, error) {
	dir := filepath.Join(nodeDir, walDir)
	if err := migratePebbleLog(filepath.Join(nodeDir, pebbleLogDir), dir, logger); err != nil {
		return nil, err
	}
	return openWAL(dir, newDeferFS(walfs.New(), noSync, syncEvery > 0), syncEvery, logger, onFail)
}

// openWAL opens the raft-wal in dir over fs, whose segment fsyncs a
// flusher makes every syncEvery when fs defers them.
func openWAL(dir string, fs *deferFS, syncEvery time.Duration, logger hclog.Logger, onFail func(error)) (*raftLog, error) {
	return openWALWith(dir, fs, syncEvery, logger, onFail, walTuning{})
}

// walTuning is what tests change of a raft log: smaller segments (0:
// raft-wal's 64 MiB), and a look at each segment list about to be
// committed.
type walTuning struct {
	segmentSize  int
	beforeCommit func()
}

func openWALWith(dir string, fs *deferFS, syncEvery time.Duration, logger hclog.Logger, onFail func(error), tune walTuning) (*raftLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("replica: raft log: %w", err)
	}
	if err := checkNotInUse(dir); err != nil {
		return nil, err
	}
	meta := &syncedMeta{BoltMetaDB: &metadb.BoltMetaDB{}, fs: fs, beforeCommit: tune.beforeCommit}
	size := raftwal.DefaultSegmentSize
	if tune.segmentSize > 0 {
		size = tune.segmentSize
	}
	w, err := raftwal.Open(dir, raftwal.WithSegmentFiler(segment.NewFiler(dir, fs)), raftwal.WithMetaStore(meta),
		raftwal.WithLogger(logger), raftwal.WithSegmentSize(size))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("replica: open raft log %s: %w", dir, err), meta.Close())
	}
	l := &raftLog{WAL: w, fs: fs, meta: meta, logger: logger, onFail: onFail}
	if fs.deferred {
		l.stop = make(chan struct{})
		l.flushing.Add(1)
		go func() {
			defer l.flushing.Done()
			periodic.Run(l.stop, syncEvery, l.syncSegments)
		}()
	}
	return l, nil
}

// syncSegments fsyncs the segment writes whose fsync was deferred. A failure
// is logged and tried again at the next tick: the writes stay in the page
// cache, so what is at risk is what an OS crash would take, as with the
// store's ASYNC_FLUSH.
func (l *raftLog) syncSegments() {
	if err := l.fs.syncAll(); err != nil {
		l.logger.Error("replica: raft log fsync", "error", err)
	}
}

// Close stops the flusher, closes the log, fsyncs what it owed and closes
// the meta file, which raft-wal's Close leaves open (and locked: bbolt's
// lock would hold a reopen of the directory forever).
func (l *raftLog) Close() error {
	if l.stop != nil {
		close(l.stop)
		l.flushing.Wait()
	}
	err := l.WAL.Close()
	return errors.Join(err, l.fs.syncAll(), l.meta.Close())
}

// StoreLog implements raft.LogStore.
func (l *raftLog) StoreLog(log *raft.Log) error { return l.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore: one write (and fsync, unless deferred)
// however many entries raft hands over.
func (l *raftLog) StoreLogs(logs []*raft.Log) error {
	if err := l.failure(); err != nil {
		return err
	}
	l.writes.Add(1)
	l.entries.Add(int64(len(logs)))
	return l.latch(l.WAL.StoreLogs(logs))
}

// DeleteRange implements raft.LogStore.
func (l *raftLog) DeleteRange(min, max uint64) error {
	if err := l.failure(); err != nil {
		return err
	}
	return l.latch(l.WAL.DeleteRange(min, max))
}

// GetLog implements raft.LogStore. An entry below the first index is not
// found even while raft-wal still holds it (a head deletion inside its
// open segment only moves the segment's first index, and its writer still
// answers for the entries below): raft must see what it deleted as gone,
// or a follower that fell behind a snapshot is sent entries instead.
func (l *raftLog) GetLog(index uint64, log *raft.Log) error {
	l.reads.Add(1)
	if first, err := l.FirstIndex(); err != nil {
		return err
	} else if index < first {
		return raft.ErrLogNotFound
	}
	return l.WAL.GetLog(index, log)
}

func (l *raftLog) failure() error {
	if p := l.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// latch keeps the first write error and reports it once.
func (l *raftLog) latch(err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("replica: raft log write: %w", err)
	if l.failed.CompareAndSwap(nil, &err) && l.onFail != nil {
		l.onFail(err)
	}
	return *l.failed.Load()
}

// deferFS is raft-wal's file system with the segment files' fsyncs as the
// node's durability asks: done at once, deferred to syncAll (deferred),
// or never (noSync).
type deferFS struct {
	types.VFS
	noSync, deferred bool

	mu    sync.Mutex
	dirty map[*deferFile]struct{}
}

func newDeferFS(inner types.VFS, noSync, deferred bool) *deferFS {
	return &deferFS{VFS: inner, noSync: noSync, deferred: deferred && !noSync, dirty: map[*deferFile]struct{}{}}
}

// Create implements types.VFS.
func (fs *deferFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := fs.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &deferFile{WritableFile: f, fs: fs}, nil
}

// OpenWriter implements types.VFS.
func (fs *deferFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := fs.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &deferFile{WritableFile: f, fs: fs}, nil
}

// syncAll fsyncs every file with a deferred fsync. A file written to while
// it is synced stays owed for the next call.
func (fs *deferFS) syncAll() error {
	fs.mu.Lock()
	owed := make([]*deferFile, 0, len(fs.dirty))
	for f := range fs.dirty {
		owed = append(owed, f)
		delete(fs.dirty, f)
	}
	fs.mu.Unlock()
	var errs []error
	for _, f := range owed {
		if err := f.syncOwed(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (fs *deferFS) owe(f *deferFile) {
	f.owed.Store(true)
	fs.mu.Lock()
	fs.dirty[f] = struct{}{}
	fs.mu.Unlock()
}

// deferFile is a segment file whose Sync deferFS decides. owed, not its
// place in deferFS's dirty set, says whether it owes an fsync: a flusher
// that took it from the set and a Close racing it agree on who syncs.
type deferFile struct {
	types.WritableFile
	fs   *deferFS
	owed atomic.Bool

	mu     sync.Mutex // orders a flusher's fsync with Close
	closed bool
}

// Sync implements types.WritableFile.
func (f *deferFile) Sync() error {
	switch {
	case f.fs.noSync:
		return nil
	case f.fs.deferred:
		f.fs.owe(f) // a write's Sync never waits for a flusher's fsync
		return nil
	}
	return f.WritableFile.Sync()
}

// syncOwed fsyncs the file if it owes one and is open (Close syncs what it
// owes); a failed fsync stays owed.
func (f *deferFile) syncOwed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || !f.owed.Swap(false) {
		return nil
	}
	if err := f.WritableFile.Sync(); err != nil {
		f.fs.owe(f)
		return err
	}
	return nil
}

// Close implements types.WritableFile; it fsyncs first what it owes.
func (f *deferFile) Close() error {
	f.fs.mu.Lock()
	delete(f.fs.dirty, f)
	f.fs.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.owed.Swap(false) {
		err = f.WritableFile.Sync()
	}
	f.closed = true
	return errors.Join(err, f.WritableFile.Close())
}

// syncedMeta is raft-wal's bbolt meta store, which fsyncs the segment
// writes deferFS owes before it commits a new segment list: a list that
// names a sealed segment (its index written at its end) or a new one is
// never durable before the writes it describes.
type syncedMeta struct {
	*metadb.BoltMetaDB
	fs           *deferFS
	beforeCommit func() // tests
}

// CommitState implements types.MetaStore.
func (m *syncedMeta) CommitState(s types.PersistentState) error {
	if err := m.fs.syncAll(); err != nil {
		return err
	}
	if m.beforeCommit != nil {
		m.beforeCommit()
	}
	return m.BoltMetaDB.CommitState(s)
}

// migratePebbleLog moves an earlier build's raft log, a Pebble database
// in old, into a raft-wal in dir: term, vote and every entry, into a
// directory beside dir renamed to it once complete, then old is deleted.
// A crash on the way leaves old in place and the copy is made again; one
// after the rename only leaves old to delete.
func migratePebbleLog(old, dir string, logger hclog.Logger) error {
	if _, err := os.Stat(old); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("replica: raft log: %w", err)
	}
	if _, err := os.Stat(dir); err == nil {
		return os.RemoveAll(old) // moved before a crash
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("replica: raft log: %w", err)
	}
	src, err := openLogStore(old, vfs.Default)
	if err != nil {
		return err
	}
	err = copyLog(tmp, src, logger)
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replica: moving the raft log from %s: %w", old, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("replica: raft log: %w", err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	logger.Info("replica: raft log moved from Pebble to raft-wal", "from", old, "to", dir)
	return os.RemoveAll(old)
}

// copyLog copies term, vote and entries from src into a new raft-wal in
// dir, every append fsynced.
func copyLog(dir string, src *logStore, logger hclog.Logger) error {
	dst, err := openWAL(dir, newDeferFS(walfs.New(), false, false), 0, logger, nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	err = migrate.CopyStable(ctx, dst, src, nil, nil, nil)
	if last, lerr := src.LastIndex(); err == nil && lerr == nil && last > 0 {
		err = migrate.CopyLogs(ctx, dst, src, 1<<20, nil)
	} else if err == nil {
		err = lerr
	}
	return errors.Join(err, dst.Close())
}

// metaFile is raft-wal's meta file in its directory.
const metaFile = "wal-meta.db"

// checkNotInUse refuses a raft log another process has open. raft-wal
// opens its bbolt meta file with no lock timeout, so a second broker on
// the same directory would wait for the first one's lock forever.
func checkNotInUse(dir string) error {
	path := filepath.Join(dir, metaFile)
	if _, err := os.Stat(path); err != nil {
		return nil // a new log: raft-wal creates it
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if errors.Is(err, bbolt.ErrTimeout) {
		return fmt.Errorf("replica: raft log %s is in use by another process: %w", dir, ErrInUse)
	}
	if err != nil {
		return fmt.Errorf("replica: raft log %s: %w", dir, err)
	}
	return db.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("replica: sync %s: %w", dir, err)
	}
	return nil
}
