package gogroup

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Go runs what it is given until Stop; Wait waits for all of it; after
// Stop, Go runs nothing and says so.
func TestGoStopWait(t *testing.T) {
	var g Group
	var ran atomic.Int64
	release := make(chan struct{})
	for range 3 {
		if !g.Go(func() { <-release; ran.Add(1) }) {
			t.Fatal("Go refused before Stop")
		}
	}
	g.Stop()
	g.Stop()
	if g.Go(func() { ran.Add(100) }) {
		t.Fatal("Go ran after Stop")
	}
	close(release)
	g.Wait()
	if n := ran.Load(); n != 3 {
		t.Fatalf("%d goroutines ran to the end before Wait returned, want 3", n)
	}
}

// Run counts a function running on another goroutine (a library's
// callback): Wait waits for it; after Stop, Run runs nothing and says so.
func TestRunCountsCallbacks(t *testing.T) {
	var g Group
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan bool)
	go func() {
		done <- g.Run(func() { close(entered); <-release })
	}()
	<-entered
	g.Stop()
	if g.Run(func() { t.Error("Run ran after Stop") }) {
		t.Fatal("Run reported true after Stop")
	}
	waited := make(chan struct{})
	go func() { g.Wait(); close(waited) }()
	time.Sleep(20 * time.Millisecond) // time for a Wait that does not wait to return
	select {
	case <-waited:
		t.Fatal("Wait returned while a Run was running")
	default:
	}
	close(release)
	if !<-done {
		t.Fatal("Run before Stop reported false")
	}
	<-waited
}
