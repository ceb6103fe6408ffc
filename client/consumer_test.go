package client

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/internal/teststart"
	"github.com/runnelmq/runnel/internal/testwait"
)

// collector records deliveries by body.
type collector struct {
	mu    sync.Mutex
	count map[string]int
	order []string
	total int
}

func newCollector() *collector { return &collector{count: map[string]int{}} }

func (c *collector) add(msgs []*MessageExt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.count[string(m.Body)]++
		c.order = append(c.order, string(m.Body))
		c.total++
	}
}

func (c *collector) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.count)
}

func (c *collector) deliveries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func (c *collector) listener() ConcurrentListener {
	return func(_ context.Context, msgs []*MessageExt) ConsumeResult {
		c.add(msgs)
		return ConsumeSuccess
	}
}

func newConsumer(t testing.TB, nameSrv, group string, mod func(*PushConsumerConfig)) *PushConsumer {
	t.Helper()
	cfg := DefaultPushConsumerConfig()
	cfg.Client = testClient(nameSrv)
	cfg.Group = group
	cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	cfg.BrokerSuspendMax = time.Second
	cfg.PullErrorDelay = 100 * time.Millisecond
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewPushConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startConsumer(t testing.TB, c *PushConsumer, topic, expr string) {
	t.Helper()
	teststart.Started(t, c, c.Subscribe(topic, expr))
}

// startCollecting starts a consumer of group, from the first offset, on
// every message of topic, collecting what it receives.
func startCollecting(t testing.TB, nameSrv, group, topic string) (*PushConsumer, *collector) {
	t.Helper()
	col := newCollector()
	c := newConsumer(t, nameSrv, group, func(cfg *PushConsumerConfig) { cfg.Concurrently = col.listener() })
	startConsumer(t, c, topic, "*")
	return c, col
}

func produce(t testing.TB, p *Producer, topic string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := p.Send(context.Background(), &Message{Topic: topic, Body: []byte(fmt.Sprintf("m-%05d", i))}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPushConsumerClusteringConcurrent(t *testing.T) {
	forBackends(t, 2, testPushConsumerClusteringConcurrent)
}

func testPushConsumerClusteringConcurrent(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 4)
	produce(t, p, "T", 0, 100)
	cons, col := startCollecting(t, be.ns, "g1", "T")
	produce(t, p, "T", 100, 100)
	testwait.For(t, testwait.Default, "200 messages", func() bool { return col.distinct() == 200 })
	// 8 queues of T and the retry queue each broker created at the first
	// heartbeat (the second may need a route refresh to show up).
	testwait.For(t, testwait.Default, "8 + 2 queues assigned", func() bool { return len(cons.Assigned()) == 8+2 })
	if err := cons.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if committed := sum(be.committed(t, "g1", "T")); committed != 200 {
		t.Fatalf("committed offsets sum to %d after a clean shutdown, want 200", committed)
	}
}
