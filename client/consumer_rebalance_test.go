package client

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/client/rebalance"
	"github.com/runnelmq/runnel/internal/testwait"
)

// gatedStrategy allocates nothing until opened, then as Averagely.
type gatedStrategy struct{ open atomic.Bool }

func (g *gatedStrategy) Name() string { return "GATED" }

func (g *gatedStrategy) Allocate(group, cid string, mqs []queue.MessageQueue, cids []string) ([]queue.MessageQueue, error) {
	if !g.open.Load() {
		return nil, nil
	}
	return rebalance.Averagely{}.Allocate(group, cid, mqs, cids)
}

// queueSelector sends to the given queues in turn.
type queueSelector struct {
	mqs []queue.MessageQueue
	n   atomic.Uint64
}

func (s *queueSelector) Select(*Message, []queue.MessageQueue, string) queue.MessageQueue {
	return s.mqs[s.n.Add(1)%uint64(len(s.mqs))]
}

// TestDroppedQueueOffsetPersistedFirst: a consumer that gives a queue up
// in a rebalance commits its in-memory offset synchronously before it lets
// go, so the next owner starts exactly where it stopped. The first consumer
// never persists on its own (an hour's persist interval) and pulls each
// queue once (an hour's pull interval, so no pull carries a commit): only
// the drop can tell the broker what it consumed.
func TestDroppedQueueOffsetPersistedFirst(t *testing.T) {
	forBackends(t, 1, testDroppedQueueOffsetPersistedFirst)
}

func testDroppedQueueOffsetPersistedFirst(t *testing.T, be *backend) {
	const perQueue = 10
	p := be.producerOnNewTopic(t, "T", 4)
	produce(t, p, "T", 0, 4*perQueue)
	be.waitMaxOffsets(t, "T", perQueue) // one pull per queue gets them all
	col := newCollector()
	c1 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Client.PersistInterval = time.Hour
		cfg.Client.RebalanceInterval = time.Hour // only notifications rebalance
		cfg.PullInterval = time.Hour
		cfg.Concurrently = col.listener()
	})
	startConsumer(t, c1, "T", "*")
	testwait.For(t, testwait.Default, "all consumed by c1", func() bool { return col.distinct() == 4*perQueue })
	for qid := range 4 {
		if off := be.brokerOffset(0, "g", "T", qid); off > 0 {
			t.Fatalf("queue %d: %d committed before any rebalance; the test cannot tell a drop's persist apart", qid, off)
		}
	}

	// c2 joins but takes nothing until c1's rebalance has finished:
	// concurrent consumers take no lock, so without the gate c2 could read
	// an offset before c1 committed it, which RocketMQ allows too.
	gate := &gatedStrategy{}
	c2 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Client.RebalanceInterval = time.Hour
		cfg.Strategy = gate
		cfg.Concurrently = col.listener()
	})
	startConsumer(t, c2, "T", "*")
	testwait.For(t, testwait.Default, "c1 gave up 2 queues", func() bool { return countTopic(c1.Assigned(), "T") == 2 })
	c1.rebalanceMu.Lock() // the rebalance that dropped them has returned
	c1.rebalanceMu.Unlock()
	kept := c1.Assigned()
	var dropped []queue.MessageQueue
	for qid := range 4 {
		mq := queue.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: int32(qid)}
		if !slices.Contains(kept, mq) {
			dropped = append(dropped, mq)
			if off := be.brokerOffset(0, "g", "T", qid); off != perQueue {
				t.Fatalf("%v dropped with %d committed, want %d", mq, off, perQueue)
			}
		}
	}

	gate.open.Store(true)
	c2.mu.Lock()
	c2.mu.inst.triggerRebalance()
	c2.mu.Unlock()
	testwait.For(t, testwait.Default, "c2 took the dropped queues", func() bool {
		return slices.Equal(queue.Sorted(filterTopic(c2.Assigned(), "T")), queue.Sorted(dropped))
	})
	// New messages only where c2 now consumes (c1 does not pull again).
	p2 := startProducer(t, be.ns, func(cfg *ProducerConfig) { cfg.Selector = &queueSelector{mqs: dropped} })
	produce(t, p2, "T", 1000, 20)
	testwait.For(t, testwait.Default, "the new messages at c2", func() bool { return col.distinct() == 4*perQueue+20 })
	testwait.For(t, testwait.Default, "c2's process queues drained", func() bool {
		for _, s := range c2.QueueStats() {
			if s.Count != 0 {
				return false
			}
		}
		return true
	})
	if d := col.deliveries(); d != 4*perQueue+20 {
		t.Fatalf("%d deliveries of %d messages: the queues c1 dropped were re-delivered", d, 4*perQueue+20)
	}
}

func filterTopic(mqs []queue.MessageQueue, topic string) []queue.MessageQueue {
	var out []queue.MessageQueue
	for _, mq := range mqs {
		if mq.Topic == topic {
			out = append(out, mq)
		}
	}
	return out
}
