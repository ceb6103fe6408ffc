//go:build !race

// Built without -race only: the official client's push consumer races
// with itself (see retry_test.go).

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestBroadcasting: two broadcasting consumers of one group each receive
// every message, from every queue; the broker needs nothing beyond the
// clustering path (no locks, no offsets: broadcasting offsets are local).
func TestBroadcasting(t *testing.T) {
	c := rcCluster(t)
	const topic, n = "BroadcastT", 40
	createTopic(t, c, 0, topic, 4)
	group := fmt.Sprintf("g-broadcast-%d", os.Getpid())
	// The official client keeps broadcasting offsets in
	// $HOME/.rocketmq_client_go/<group>/<clientID>/offset.json (read at
	// package init, so the directory cannot be redirected from here).
	// Registered before the consumers, so it runs after their shutdown.
	if home := os.Getenv("HOME"); home != "" {
		t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(home, ".rocketmq_client_go", group)) })
	}
	a, b := newQueueRecorder(), newQueueRecorder()
	newPushConsumer(t, c, group, topic, "*", a.fn(0), consumer.WithConsumerModel(consumer.BroadCasting))
	newPushConsumer(t, c, group, topic, "*", b.fn(0), consumer.WithConsumerModel(consumer.BroadCasting))
	testwait.For(t, testwait.Default, "both consumers registered", func() bool { return len(c.Broker(0).ConsumerIDs(group)) == 2 })

	p := newProducer(t, c)
	sendN(t, p, topic, "b", n, "")
	for name, r := range map[string]*queueRecorder{"first": a, "second": b} {
		testwait.For(t, 30*time.Second, "every message at the "+name+" consumer", func() bool { return r.distinct() == n })
		if q := len(r.queuesOf(0)); q != 4 {
			t.Fatalf("%s consumer received from %d queues, want all 4", name, q)
		}
	}
}
