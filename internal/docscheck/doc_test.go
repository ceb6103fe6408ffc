// Package docscheck checks the files a user reads and runs first against
// the tree: README.md and docs/ (every relative link and anchor resolves;
// the quick start is what scripts/quickstart.sh runs) and
// docker-compose.yml.
package docscheck

import (
	"path/filepath"
	"runtime"
	"testing"
)

// root returns path (slash-separated, relative to the repository root) on
// this machine.
func root(t *testing.T, path string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("docscheck: cannot find the repository")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(path))
}
