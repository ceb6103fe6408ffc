package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
)

// TestReopenLarge measures Open on a large store: opt in with
// RUNNEL_STORE_REOPEN_MIB=1024 (the store's size in MiB of 1 KiB messages).
func TestReopenLarge(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv("RUNNEL_STORE_REOPEN_MIB"))
	if mib <= 0 {
		t.Skip("set RUNNEL_STORE_REOPEN_MIB to run")
	}
	dir := t.TempDir()
	opts := DefaultOptions(dir)
	opts.RetentionInterval = -1
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]*message.MessageExt, 64)
	for i := range batch {
		batch[i] = benchMsg(int32(i % 8))
	}
	start := time.Now()
	for s.MaxPhysOffset() < int64(mib)<<20 {
		if _, err := s.Put(batch); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d MiB in %v", s.MaxPhysOffset()>>20, time.Since(start))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	s, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reopen of %d MiB store took %v", s.MaxPhysOffset()>>20, time.Since(start))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Once Pebble's background compactions have settled, Open is cheap.
	start = time.Now()
	if s, err = Open(opts); err != nil {
		t.Fatal(err)
	}
	t.Logf("second reopen took %v", time.Since(start))
	start = time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("close took %v", time.Since(start))
}

const fillEnv = "RUNNEL_STORE_FILL_MIB"

// fillChild writes 1 KiB messages in batches of 64 until the log holds the
// given MiB, prints "filled" and waits to be killed.
func fillChild(mib int64) {
	opts := DefaultOptions(os.Getenv(crashChildEnv))
	opts.RetentionInterval = -1
	s, err := Open(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	batch := make([]*message.MessageExt, 64)
	for i := range batch {
		batch[i] = benchMsg(int32(i % 8))
	}
	for s.MaxPhysOffset() < mib<<20 {
		if _, err := s.Put(batch); err != nil {
			fmt.Fprintln(os.Stderr, "put:", err)
			os.Exit(3)
		}
	}
	fmt.Println("filled")
	select {}
}

// TestReopenAfterKill measures Open right after kill -9 of a process that
// wrote a large store: opt in with RUNNEL_STORE_REOPEN_KILL_MIB=1024
// (RUNNEL_STORE_REOPEN_SYNC=1 runs sync(2) first, to tell the kernel's
// writeback of the burst apart from Open's own work).
func TestReopenAfterKill(t *testing.T) {
	mib, _ := strconv.Atoi(os.Getenv("RUNNEL_STORE_REOPEN_KILL_MIB"))
	if mib <= 0 {
		t.Skip("set RUNNEL_STORE_REOPEN_KILL_MIB to run")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, fillEnv+"="+strconv.Itoa(mib))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "filled" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %q", sc.Text())
	}
	t.Logf("child wrote %d MiB in %v", mib, time.Since(start))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if os.Getenv("RUNNEL_STORE_REOPEN_SYNC") != "" {
		// Isolates the cost of the kernel writing back the burst's dirty
		// pages, which Open's own fsyncs otherwise wait behind.
		start = time.Now()
		syscall.Sync()
		t.Logf("sync(2) before open took %v", time.Since(start))
	}
	opts := DefaultOptions(dir)
	opts.RetentionInterval = -1
	for _, when := range []string{"after kill -9", "after a clean close"} {
		start = time.Now()
		s, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("open %s of a %d MiB store took %v", when, s.MaxPhysOffset()>>20, time.Since(start))
		start = time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("close took %v", time.Since(start))
	}
}
