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

// EnvAllocsProfile names a file that `runnel dev` writes its allocation
// profile to when it stops (every allocation since its start, sampled as
// the runtime samples them): where the garbage the collector spends its
// CPU on comes from, under the same clients as EnvCPUProfile.
const EnvAllocsProfile = "RUNNEL_ALLOCS_PROFILE"

// startCPUProfile starts the profiles EnvCPUProfile and EnvAllocsProfile
// ask for, if any, and returns what stops them and closes their files.
func startCPUProfile(getenv func(string) string) (stop func() error, err error) {
	stopCPU, err := startCPU(getenv(EnvCPUProfile))
	if err != nil {
		return nil, err
	}
	allocs := getenv(EnvAllocsProfile)
	if allocs == "" {
		return stopCPU, nil
	}
	f, err := os.Create(allocs)
	if err != nil {
		_ = stopCPU()
		return nil, fmt.Errorf("%s: %w", EnvAllocsProfile, err)
	}
	return func() error {
		err := pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if serr := stopCPU(); err == nil {
			err = serr
		}
		return err
	}, nil
}

// startCPU starts a CPU profile written to path, if set.
func startCPU(path string) (stop func() error, err error) {
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
