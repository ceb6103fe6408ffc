package latch

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Of many concurrent callers exactly one sets the flag, and later calls
// report it already set.
func TestSetOnlyFirst(t *testing.T) {
	var mu sync.Mutex
	var flag bool
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if Set(&mu, &flag) {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || !flag {
		t.Fatalf("%d callers set the flag (flag %v), want 1", won.Load(), flag)
	}
	if Set(&mu, &flag) {
		t.Fatal("a later call set the flag again")
	}
}
