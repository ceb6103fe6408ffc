package broker

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStoreDirIsPrivate: the broker's store directory, made by the
// operator with group and other bits, is its owner's alone once the
// broker has opened it.
func TestStoreDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broker-a")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	startBrokerAt(t, dir, nil)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Fatalf("store directory is %v, want 0700", got)
	}
}
