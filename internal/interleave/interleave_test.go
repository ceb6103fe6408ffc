package interleave

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestRunCountsAndRotates checks that every setup gets exactly n calls,
// that the setup going first rotates, and that an error stops the run.
func TestRunCountsAndRotates(t *testing.T) {
	var calls [3]atomic.Int64
	var order []int
	sends := make([]func() error, 3)
	for i := range sends {
		sends[i] = func() error {
			if calls[i].Add(1)%10 == 1 {
				order = append(order, i) // one goroutine: par is 1
			}
			return nil
		}
	}
	res, err := Run(35, 10, 1, sends)
	if err != nil {
		t.Fatal(err)
	}
	for i := range calls {
		if calls[i].Load() != 35 {
			t.Fatalf("setup %d called %d times, want 35", i, calls[i].Load())
		}
	}
	if len(res.Rounds) != 4 || len(res.Total) != 3 {
		t.Fatalf("%d rounds, %d totals", len(res.Rounds), len(res.Total))
	}
	want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("slice order %v, want %v", order, want)
		}
	}
	boom := errors.New("boom")
	if _, err := Run(100, 10, 4, []func() error{func() error { return boom }}); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
}

func TestRatios(t *testing.T) {
	r := Result{Total: []time.Duration{10, 20}, Rounds: [][]time.Duration{{1, 2}, {3, 3}, {4, 1}}}
	if r.Ratio(1) != 0.5 || r.MedianRatio(1) != 1 {
		t.Fatalf("Ratio %v MedianRatio %v", r.Ratio(1), r.MedianRatio(1))
	}
}

// TestSendersLiveForTheRun: every slice of every setup is sent from the
// same par goroutines, so none pays for a fresh stack growing per slice,
// and none is left once Run returns. (How many of the par make calls is
// the scheduler's: with a send that returns at once, one sender may drain
// every slice before the others look. Goroutines started per slice would
// show as one id or more per slice: 120 here.)
func TestSendersLiveForTheRun(t *testing.T) {
	var mu sync.Mutex
	ids := map[string]bool{}
	send := func() error {
		buf := make([]byte, 64)
		id, _, _ := strings.Cut(strings.TrimPrefix(string(buf[:runtime.Stack(buf, false)]), "goroutine "), " ")
		mu.Lock()
		ids[id] = true
		mu.Unlock()
		return nil
	}
	before := runtime.NumGoroutine()
	if _, err := Run(400, 10, 4, []func() error{send, send, send}); err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 || len(ids) > 4 {
		t.Fatalf("calls made from %d goroutines over 120 slices, want at most the 4 senders", len(ids))
	}
	testwait.For(t, testwait.Default, "the senders gone", func() bool { return runtime.NumGoroutine() <= before })
}
