package store

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A store on disk is its owner's alone: its directories are made 0700 and
// its files 0600, Pebble's included (the store's default filesystem is
// privateFS), whatever the process's umask. A topic's messages, consumer
// offsets and ACL 2.0's users (whose passwords the broker needs in clear,
// for their HMACs) are in it.
const (
	privateDirMode  fs.FileMode = 0o700
	privateFileMode fs.FileMode = 0o600
)

// privateFS is the operating system's filesystem (vfs.Default) creating
// files 0600 and directories 0700. A file is made private as it is
// created, empty.
type privateFS struct{ vfs.FS }

// osFS is the store's default filesystem: the OS's, private.
func osFS() vfs.FS { return privateFS{vfs.Default} }

// private reports whether fs is the operating system's filesystem (whose
// modes the store sets): vfs.Default, or privateFS over it.
func private(f vfs.FS) bool {
	switch f := f.(type) {
	case privateFS:
		return f.FS == vfs.Default
	}
	return f == vfs.Default
}

// chmodFile makes the file or lock f just opened as name private, or
// closes it.
func chmodFile[F io.Closer](f F, name string, err error) (F, error) {
	if err != nil {
		return f, err
	}
	if err := os.Chmod(name, privateFileMode); err != nil {
		_ = f.Close()
		var none F
		return none, err
	}
	return f, nil
}

func (p privateFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := p.FS.Create(name, c)
	return chmodFile(f, name, err)
}

func (p privateFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := p.FS.OpenReadWrite(name, c, opts...)
	return chmodFile(f, name, err)
}

func (p privateFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := p.FS.ReuseForWrite(oldname, newname, c)
	return chmodFile(f, newname, err)
}

// Lock locks name, creating it if needed; the lock file is empty.
func (p privateFS) Lock(name string) (io.Closer, error) {
	c, err := p.FS.Lock(name)
	return chmodFile(c, name, err)
}

func (p privateFS) MkdirAll(dir string, _ os.FileMode) error {
	return p.FS.MkdirAll(dir, privateDirMode)
}

func (p privateFS) Unwrap() vfs.FS { return p.FS }

// PrivateDir makes dir, on the operating system's filesystem (f is
// vfs.Default, or nil for it), exist with mode 0700, tightening the mode
// of one that exists: what a process holding a store beside other files
// (a replicated group's node: its raft log, its snapshots, its stores)
// calls on its root. Any other filesystem (vfs.NewMem) is left alone.
func PrivateDir(f vfs.FS, dir string) error {
	if f != nil && !private(f) {
		return nil
	}
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("store: " + dir + " is not a directory")
	}
	if fi.Mode().Perm() != privateDirMode {
		return os.Chmod(dir, privateDirMode)
	}
	return nil
}
