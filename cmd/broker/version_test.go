package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	cmd := newCommand(&out, &bytes.Buffer{}, func(string) string { return "" })
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "runnel ") {
		t.Fatalf("--version: %v %q", err, out.String())
	}
}

// The broker reads --memory-limit before it opens anything, and refuses a
// limit it cannot read, naming the flag.
func TestMemoryLimitFlagRead(t *testing.T) {
	cmd := newCommand(&bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "" })
	cmd.SetArgs([]string{"--memory-limit", "lots", "--listen", "127.0.0.1:0", "--store-dir", t.TempDir(), "--log-level", "error"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
		t.Fatalf("--memory-limit lots: %v, want an error naming the flag", err)
	}
}
