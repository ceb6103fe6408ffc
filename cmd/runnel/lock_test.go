package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/internal/clitest"
)

// Two `runnel dev` on one store: the second is told who has it, and the
// first says when it stops; a pid file a dead process left is taken over.
func TestDevRefusesAStoreInUse(t *testing.T) {
	dir := t.TempDir()
	args := []string{"dev", "--dir", dir, "--namesrv-listen", "127.0.0.1:0", "--broker-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--console-listen", "off"}
	out, stop := background(t, servingLine, command(args...))

	second := newCommand(io.Discard, io.Discard)
	second.SetArgs(append(args, "--fresh"))
	err := second.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "is in use by another process (pid ") || !strings.Contains(err.Error(), "use --dir") {
		t.Fatalf("second dev on the same store: %v", err)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "runnel dev: stopped") {
		t.Fatalf("no stop line: %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, pidFileName)); !os.IsNotExist(err) {
		t.Fatalf("pid file left behind: %v", err)
	}

	// A pid file naming no live process is stale.
	if err := os.WriteFile(filepath.Join(dir, pidFileName), []byte("2147483646\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatalf("stale pid file: %v", err)
	}
	unlock()
}

func TestVersionFlag(t *testing.T) {
	var out clitest.Buffer
	cmd := newCommand(&out, io.Discard)
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "runnel ") {
		t.Fatalf("--version: %v %q", err, out.String())
	}
}

// runnel dev reads --memory-limit before it takes the store, and refuses a
// limit it cannot read, naming the flag.
func TestDevMemoryLimitFlagRead(t *testing.T) {
	cmd := newCommand(io.Discard, io.Discard)
	cmd.SetArgs([]string{"dev", "--memory-limit", "1.5GiB", "--dir", t.TempDir()})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
		t.Fatalf("--memory-limit 1.5GiB: %v, want an error naming the flag", err)
	}
}
