package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestBroadcastingRestartReadsLocalOffsets: a broadcasting consumer that
// restarts with the same client id and offset directory reads its offsets
// file at start and continues where it stopped: nothing it consumed comes
// again (ConsumeFrom is FIRST, so a missed file would re-deliver all), and
// what was sent meanwhile and after arrives.
func TestBroadcastingRestartReadsLocalOffsets(t *testing.T) {
	forBackends(t, 1, testBroadcastingRestartReadsLocalOffsets)
}

func testBroadcastingRestartReadsLocalOffsets(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 3)
	dir := t.TempDir()
	client := testClient(be.ns) // one client id for both runs
	col := newCollector()
	start := func() *PushConsumer {
		c := newConsumer(t, be.ns, "bg", func(cfg *PushConsumerConfig) {
			cfg.Client = client
			cfg.Model = Broadcasting
			cfg.LocalOffsetDir = dir
			cfg.Concurrently = col.listener()
		})
		startConsumer(t, c, "T", "*")
		return c
	}
	first := start()
	produce(t, p, "T", 0, 30)
	testwait.For(t, testwait.Default, "30 at the first run", func() bool { return col.distinct() == 30 })
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	produce(t, p, "T", 30, 15) // while no one consumes
	second := start()
	produce(t, p, "T", 45, 15)
	testwait.For(t, testwait.Default, "all 60 after the restart", func() bool { return col.distinct() == 60 })
	testwait.For(t, testwait.Default, "process queues drained", func() bool {
		for _, s := range second.QueueStats() {
			if s.Count != 0 {
				return false
			}
		}
		return true
	})
	col.mu.Lock()
	defer col.mu.Unlock()
	for i := range 60 {
		if b := fmt.Sprintf("m-%05d", i); col.count[b] != 1 {
			t.Fatalf("%s delivered %d times across the restart, want 1", b, col.count[b])
		}
	}
}
