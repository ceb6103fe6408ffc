package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// pidFileName is the file in a dev store directory naming the process
// that serves it. The store's own lock only says "resource temporarily
// unavailable"; this says who has it.
const pidFileName = "runnel-dev.pid"

// lockDir claims dir for this process: it creates dir and writes
// runnel-dev.pid there, exclusively. A pid file of a live process refuses
// the claim naming it; one a dead process left behind is taken over. The
// returned func removes the file.
func lockDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, pidFileName)
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := fmt.Fprintf(f, "%d\n", os.Getpid())
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				_ = os.Remove(path)
				return nil, werr
			}
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		b, rerr := os.ReadFile(path)
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if rerr == nil && perr == nil && pid > 0 && alive(pid) {
			return nil, fmt.Errorf("store %s is in use by another process (pid %d); stop it or use --dir", dir, pid)
		}
		_ = os.Remove(path) // left by a process that is gone
	}
	return nil, fmt.Errorf("store %s: could not claim %s", dir, pidFileName)
}

// alive reports whether a process with pid exists (signal 0 checks
// without sending anything).
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// emptyDir removes what dir holds except the pid file this process wrote
// (--fresh).
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == pidFileName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
