package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/faultfs"
)

// TestSlowDisk: a SYNC_FLUSH broker on a disk whose every fsync takes
// 40 ms, under 16 concurrent senders and a consumer. Sends are slower but
// none fails, and the model holds: every message answered SEND_OK is
// consumed, and none that was sent once arrives with two different store
// positions.
func TestSlowDisk(t *testing.T) {
	fs := faultfs.New(vfs.Default, 100<<30, 20)
	c := rcCluster(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.FlushMode = store.SyncFlush
		cfg.StoreOptions = func(o *store.Options) { o.FS = fs }
	}))
	createTopic(t, c, 0, "SlowT", 4)
	fs.SetSyncDelay(40 * time.Millisecond)
	p := rcProducer(t, c)
	got := newRCCollector()
	rcConsumer(t, c, "slow-g", "SlowT", "*", got.add)

	const senders, each = 16, 15
	var mu sync.Mutex
	acked := map[string]string{} // body -> offsetMsgId
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b := fmt.Sprintf("slow-%d-%d", s, i)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res, err := p.Send(ctx, &client.Message{Topic: "SlowT", Body: []byte(b)})
				cancel()
				if err != nil {
					errs <- fmt.Errorf("send %s: %w", b, err)
					continue
				}
				mu.Lock()
				acked[b] = res.OffsetMsgID
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := fs.Synced.Load(); n == 0 {
		t.Fatal("the slow disk saw no sync: the test did not exercise it")
	}
	testwait.For(t, 60*time.Second, "every acknowledged message consumed", func() bool { return got.len() >= len(acked) })
	for b, id := range acked {
		m := got.get(b)
		if m == nil {
			t.Fatalf("acknowledged %s not consumed", b)
		}
		if m.OffsetMsgID != id {
			t.Fatalf("%s consumed as %s, acknowledged as %s: stored twice?", b, m.OffsetMsgID, id)
		}
	}
	if got.len() != len(acked) {
		t.Fatalf("consumed %d distinct bodies, acknowledged %d", got.len(), len(acked))
	}
}
