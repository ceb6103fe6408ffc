package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfile: RUNNEL_CPU_PROFILE makes dev write a profile that pprof
// reads (a gzipped protobuf), and nothing is written without it.
func TestCPUProfile(t *testing.T) {
	stop, err := startCPUProfile(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "cpu.pprof")
	profileOnce(t, func(k string) string {
		if k == EnvCPUProfile {
			return path
		}
		return ""
	}, path)

	if _, err := startCPUProfile(func(string) string { return filepath.Join(t.TempDir(), "no", "such", "dir") }); err == nil {
		t.Fatal("a profile that cannot be created started")
	}
}

// TestAllocsProfile: RUNNEL_ALLOCS_PROFILE makes dev write its allocation
// profile when it stops, with or without a CPU profile beside it.
func TestAllocsProfile(t *testing.T) {
	dir := t.TempDir()
	for _, withCPU := range []bool{false, true} {
		path := filepath.Join(dir, fmt.Sprintf("allocs-%v.pprof", withCPU))
		profileOnce(t, func(k string) string {
			switch {
			case k == EnvAllocsProfile:
				return path
			case k == EnvCPUProfile && withCPU:
				return filepath.Join(dir, "cpu.pprof")
			}
			return ""
		}, path)
	}
	if _, err := startCPUProfile(func(k string) string {
		if k == EnvAllocsProfile {
			return filepath.Join(dir, "no", "such", "dir")
		}
		return ""
	}); err == nil {
		t.Fatal("an allocation profile that cannot be created started")
	}
}

// profileOnce starts the profiles getenv names, stops them, and fails t
// unless the file at path is gzipped, as pprof writes its profiles.
func profileOnce(t *testing.T, getenv func(string) string, path string) {
	t.Helper()
	stop, err := startCPUProfile(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s: %d bytes, not gzipped: % x", path, len(b), b[:min(len(b), 8)])
	}
}
