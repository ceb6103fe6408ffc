// Package faultfs is a Pebble filesystem for fault tests: it wraps another
// vfs.FS, reports a disk usage the test chooses, can make every write
// fail with ENOSPC, as a full disk does, and can make syncs slow. It owns nothing else; the store
// and the broker take it through store.Options.FS.
package faultfs

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FS is a vfs.FS whose disk usage and write failures are set by the test.
// All methods are safe for concurrent use.
type FS struct {
	vfs.FS
	total   uint64
	usedPct atomic.Int32
	usageFn atomic.Pointer[func() int]
	enospc  atomic.Bool
	// Failed counts the writes refused with ENOSPC.
	Failed atomic.Int64
	// syncDelay is added to every sync (a slow disk), in nanoseconds.
	syncDelay atomic.Int64
	// Synced counts the syncs.
	Synced atomic.Int64
}

// SetSyncDelay makes every later sync of a file (Sync, SyncData, SyncTo)
// take d longer, as a slow or busy disk does.
func (fs *FS) SetSyncDelay(d time.Duration) { fs.syncDelay.Store(int64(d)) }

func (fs *FS) slowSync() {
	fs.Synced.Add(1)
	if d := time.Duration(fs.syncDelay.Load()); d > 0 {
		time.Sleep(d)
	}
}

// New wraps inner with a disk of total bytes, used at usedPct percent.
func New(inner vfs.FS, total uint64, usedPct int) *FS {
	fs := &FS{FS: inner, total: total}
	fs.usedPct.Store(int32(usedPct))
	return fs
}

// SetUsage sets the usage GetDiskUsage reports, in percent.
func (fs *FS) SetUsage(pct int) { fs.usedPct.Store(int32(pct)) }

// SetUsageFunc makes GetDiskUsage report fn's answer, in percent, instead
// of the usage SetUsage set (nil goes back to it): a disk whose usage
// follows what the test's store holds.
func (fs *FS) SetUsageFunc(fn func() int) {
	if fn == nil {
		fs.usageFn.Store(nil)
		return
	}
	fs.usageFn.Store(&fn)
}

// FailWrites makes every later write (Write, WriteAt, Preallocate, Create of
// a file) fail with ENOSPC while on is true.
func (fs *FS) FailWrites(on bool) { fs.enospc.Store(on) }

// Unwrap implements vfs.FS.
func (fs *FS) Unwrap() vfs.FS { return fs.FS }

// GetDiskUsage implements vfs.FS with the chosen usage.
func (fs *FS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	pct := int(fs.usedPct.Load())
	if fn := fs.usageFn.Load(); fn != nil {
		pct = (*fn)()
	}
	used := fs.total * uint64(pct) / 100
	return vfs.DiskUsage{TotalBytes: fs.total, UsedBytes: used, AvailBytes: fs.total - used}, nil
}

func (fs *FS) fail(op, name string) error {
	if !fs.enospc.Load() {
		return nil
	}
	fs.Failed.Add(1)
	return &fsError{op: op, name: name}
}

// fsError is what the OS returns for a write to a full disk.
type fsError struct{ op, name string }

func (e *fsError) Error() string { return fmt.Sprintf("%s %s: %v", e.op, e.name, syscall.ENOSPC) }
func (e *fsError) Unwrap() error { return syscall.ENOSPC }

// Create implements vfs.FS.
func (fs *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := fs.fail("create", name); err != nil {
		return nil, err
	}
	f, err := fs.FS.Create(name, category)
	return fs.wrap(f, name, err)
}

// ReuseForWrite implements vfs.FS.
func (fs *FS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(f, newname, err)
}

// OpenReadWrite implements vfs.FS.
func (fs *FS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(f, name, err)
}

func (fs *FS) wrap(f vfs.File, name string, err error) (vfs.File, error) {
	if err != nil {
		return f, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

type file struct {
	vfs.File
	fs   *FS
	name string
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.fs.fail("write", f.name); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.fail("write", f.name); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *file) Sync() error {
	f.fs.slowSync()
	return f.File.Sync()
}

func (f *file) SyncData() error {
	f.fs.slowSync()
	return f.File.SyncData()
}

func (f *file) SyncTo(length int64) (bool, error) {
	f.fs.slowSync()
	return f.File.SyncTo(length)
}

func (f *file) Preallocate(off, n int64) error {
	if err := f.fs.fail("fallocate", f.name); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}
