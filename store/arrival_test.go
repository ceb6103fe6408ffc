package store

import (
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
)

// A batch whose messages interleave two queues fires the arrival hook once
// per queue (as before the change, when queueNext was a map), with the
// queue's final max.
func TestArrivalOncePerQueueInterleaved(t *testing.T) {
	var mu sync.Mutex
	got := map[int32][]int64{}
	opts := memOptions(vfs.NewMem(), fakeclock.New(t0))
	opts.OnArrival = func(topic string, q int32, max int64) {
		mu.Lock()
		got[q] = append(got[q], max)
		mu.Unlock()
	}
	s := mustOpen(t, opts)
	mustPut(t, s, msg("T", 0, "a"), msg("T", 2, "b"), msg("T", 0, "c"))
	mu.Lock()
	defer mu.Unlock()
	if len(got[0]) != 1 || got[0][0] != 2 || len(got[2]) != 1 || got[2][0] != 1 {
		t.Fatalf("arrivals %v, want queue 0 once with max 2 and queue 2 once", got)
	}
}
