package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// EnvCPUProfile names a file that `runnel dev` writes a CPU profile of
// itself to, from its start until it stops (SIGINT or SIGTERM): how the
// broker's own CPU is profiled under a client running elsewhere, as in
// bench's process topology (docs/performance.md). Unset, nothing is
// profiled.
const EnvCPUProfile = "RUNNEL_CPU_PROFILE"

// startCPUProfile starts the profile EnvCPUProfile asks for, if any, and
// returns what stops it and closes its file.
func startCPUProfile(getenv func(string) string) (stop func() error, err error) {
	path := getenv(EnvCPUProfile)
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvCPUProfile, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", EnvCPUProfile, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
