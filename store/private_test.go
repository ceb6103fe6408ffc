package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestStoreFilesArePrivate opens a store on disk, under a umask that would
// leave its files readable by everyone, in a directory that was: every
// directory of it ends 0700 and every file 0600, Pebble's own (its WAL,
// tables, manifest, options, lock) included, through a write, a flush and
// a reopen. An ACL 2.0 user's password is in there.
func TestStoreFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{Dir: dir, RetentionInterval: -1, FlushInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20}
	for round := range 2 {
		s, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		mustPut(t, s, msg("T", 0, "secret body"))
		if err := s.PutAuth("user/alice", []byte(`{"password":"aliceSecret"}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		files := 0
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			want := privateFileMode
			if d.IsDir() {
				want = privateDirMode
			} else {
				files++
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("round %d: %s is %v, want %v", round, path, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files < 5 {
			t.Fatalf("round %d: only %d files: the walk missed the store", round, files)
		}
	}
}

// TestPrivateDirLeavesOtherFilesystemsAlone: a store on an in-memory
// filesystem touches no directory on disk.
func TestPrivateDirLeavesOtherFilesystemsAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-made")
	if err := PrivateDir(vfs.NewMem(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("PrivateDir on a MemFS made %s on disk: %v", dir, err)
	}
	if err := PrivateDir(vfs.Default, dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != privateDirMode {
		t.Fatalf("PrivateDir on disk: %v %v", fi, err)
	}
}
