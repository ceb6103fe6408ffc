// Package walfs wraps a Pebble filesystem so that the write-ahead log can be
// "synced" to the operating system without an fsync, and fsynced later in
// the background. It is how the store's ASYNC_FLUSH mode survives kill -9.
//
// Why it exists. Pebble's WAL writer (record.LogWriter) copies a committed
// batch into an in-memory block and returns; a commit with pebble.NoSync only
// reaches the file when a 32 KiB block fills or a later commit asks for a
// sync. A process killed right after a NoSync commit therefore loses it,
// although the caller was told it succeeded. A commit with pebble.Sync waits
// until the LogWriter's flush loop has written the block to the file
// (write(2), the OS page cache) and then called Sync on it.
//
// With DeferSync on, Sync on a WAL file returns at once: the commit is
// acknowledged once its bytes are in the page cache, which a process crash
// cannot take away (only an OS crash or power loss can, the same promise
// RocketMQ's ASYNC_FLUSH makes). SyncAll, called by the store's flusher at a
// bounded interval, fsyncs every open WAL file. Closing a
// WAL file always fsyncs it, so a rotated-away WAL is never left unsynced.
// Concurrent committers still share one write via Pebble's own commit
// pipeline (group commit).
//
// Only WAL files (created with the "pebble-wal" write category) are
// affected; sstables, the MANIFEST and OPTIONS files keep real fsyncs, which
// Pebble needs for its own consistency.
package walfs

import (
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walCategory is the DiskWriteCategory Pebble passes when it creates or
// recycles a WAL file.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// FS is a vfs.FS whose WAL files defer fsync when DeferSync is set.
type FS struct {
	vfs.FS
	deferSync bool

	mu    sync.Mutex
	files map[*walFile]struct{}
}

// New wraps inner. With deferSync false the wrapper is transparent.
func New(inner vfs.FS, deferSync bool) *FS {
	return &FS{FS: inner, deferSync: deferSync, files: make(map[*walFile]struct{})}
}

// Unwrap returns the wrapped filesystem.
func (fs *FS) Unwrap() vfs.FS { return fs.FS }

// Create implements vfs.FS.
func (fs *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || category != walCategory {
		return f, err
	}
	return fs.track(f), nil
}

// ReuseForWrite implements vfs.FS.
func (fs *FS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil || category != walCategory {
		return f, err
	}
	return fs.track(f), nil
}

func (fs *FS) track(f vfs.File) vfs.File {
	if !fs.deferSync {
		return f
	}
	w := &walFile{File: f, fs: fs}
	fs.mu.Lock()
	fs.files[w] = struct{}{}
	fs.mu.Unlock()
	return w
}

// SyncAll fsyncs every open WAL file (an idle file's fdatasync finds nothing
// to write). It is safe to call concurrently with writes; the first error is
// returned.
func (fs *FS) SyncAll() error {
	fs.mu.Lock()
	files := make([]*walFile, 0, len(fs.files))
	for f := range fs.files {
		files = append(files, f)
	}
	fs.mu.Unlock()
	var first error
	for _, f := range files {
		if err := f.realSync(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// walFile defers Sync, SyncData and SyncTo until realSync.
type walFile struct {
	vfs.File
	fs *FS

	// syncMu serialises realSync with Close, so a file is never synced
	// after it was closed.
	syncMu sync.Mutex
	closed bool
}

func (f *walFile) Sync() error                { return nil }
func (f *walFile) SyncData() error            { return nil }
func (f *walFile) SyncTo(int64) (bool, error) { return false, nil }

func (f *walFile) realSync() error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if f.closed {
		return nil
	}
	// fdatasync: WAL files are preallocated, so their data is all that
	// needs to reach the disk.
	return f.File.SyncData()
}

// Close fsyncs before closing: the file's tail must be durable once Pebble
// moves to the next WAL.
func (f *walFile) Close() error {
	f.fs.mu.Lock()
	delete(f.fs.files, f)
	f.fs.mu.Unlock()
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.closed = true
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
