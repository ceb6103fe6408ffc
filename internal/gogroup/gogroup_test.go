package gogroup

import (
	"sync/atomic"
	"testing"

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
