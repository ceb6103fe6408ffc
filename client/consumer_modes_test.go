package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// crash stops c the way a killed process stops: nothing is persisted,
// unlocked or unregistered; its connections just close.
func (c *PushConsumer) crash() {
	c.rebalanceMu.Lock()
	c.mu.Lock()
	c.mu.closed = true
	inst := c.mu.inst
	c.mu.Unlock()
	c.rebalanceMu.Unlock()
	inst.unregisterConsumer(c.cfg.Group)
	c.stopLife()
	c.wg.Wait()
	inst.release()
}

func TestTwoConsumersSplitQueuesNothingLost(t *testing.T) {
	forBackends(t, 2, testTwoConsumersSplitQueuesNothingLost)
}

func testTwoConsumersSplitQueuesNothingLost(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 4)
	col := newCollector()
	c1 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Concurrently = col.listener()
		cfg.Client.RebalanceInterval = time.Minute // only notifications rebalance
	})
	startConsumer(t, c1, "T", "*")
	produce(t, p, "T", 0, 100)
	c2 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Concurrently = col.listener()
		cfg.Client.RebalanceInterval = time.Minute
	})
	startConsumer(t, c2, "T", "*")
	// NOTIFY_CONSUMER_IDS_CHANGED makes c1 give up half its queues.
	testwait.For(t, testwait.Default, "queues split 4/4, none held twice", func() bool {
		if countTopic(c1.Assigned(), "T") != 4 || countTopic(c2.Assigned(), "T") != 4 {
			return false
		}
		// Concurrent consumers take no locks, so a queue may briefly be held
		// by both while the second one's rebalance runs; it must settle.
		seen := map[queue.MessageQueue]bool{}
		for _, mq := range append(c1.Assigned(), c2.Assigned()...) {
			if seen[mq] {
				return false
			}
			seen[mq] = true
		}
		return true
	})
	produce(t, p, "T", 100, 200)
	testwait.For(t, testwait.Default, "300 messages", func() bool { return col.distinct() == 300 })
	// Rebalance may re-deliver the few messages in flight on a moved queue
	// (at-least-once), never lose any.
	if d := col.deliveries(); d > 300+2*32 {
		t.Fatalf("%d deliveries for 300 messages", d)
	}
}

func countTopic(mqs []queue.MessageQueue, topic string) int {
	n := 0
	for _, mq := range mqs {
		if mq.Topic == topic {
			n++
		}
	}
	return n
}

func TestCleanShutdownRedeliversNothing(t *testing.T) {
	forBackends(t, 1, testCleanShutdownRedeliversNothing)
}

func testCleanShutdownRedeliversNothing(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 4)
	produce(t, p, "T", 0, 200)
	col := newCollector()
	var consumed atomic.Int64
	c1 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Client.PersistInterval = time.Hour // only Shutdown persists
		cfg.Concurrently = func(_ context.Context, msgs []*MessageExt) ConsumeResult {
			col.add(msgs)
			consumed.Add(int64(len(msgs)))
			return ConsumeSuccess
		}
	})
	startConsumer(t, c1, "T", "*")
	testwait.For(t, testwait.Default, "some messages consumed", func() bool { return consumed.Load() >= 50 })
	if err := c1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := col.deliveries()
	c2 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) { cfg.Concurrently = col.listener() })
	startConsumer(t, c2, "T", "*")
	testwait.For(t, testwait.Default, "all 200", func() bool { return col.distinct() == 200 })
	be.waitAtEnd(t, "T", c2) // a re-delivery would have come by then
	if d := col.deliveries(); d != 200 {
		t.Fatalf("%d deliveries of 200 messages (%d before shutdown): a clean shutdown re-delivered", d, before)
	}
}

func TestKilledConsumerRedeliversAtMostThePersistWindow(t *testing.T) {
	forBackends(t, 1, testKilledConsumerRedeliversAtMostThePersistWindow)
}

func testKilledConsumerRedeliversAtMostThePersistWindow(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 2)
	produce(t, p, "T", 0, 400)
	const persist = 100 * time.Millisecond
	var mu sync.Mutex
	consumedAt := map[string]time.Time{}
	c1 := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Client.PersistInterval = persist
		cfg.ConsumeGoroutines = 1
		cfg.Concurrently = func(_ context.Context, msgs []*MessageExt) ConsumeResult {
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			for _, m := range msgs {
				consumedAt[string(m.Body)] = time.Now()
			}
			mu.Unlock()
			return ConsumeSuccess
		}
	})
	startConsumer(t, c1, "T", "*")
	testwait.For(t, testwait.Default, "150 consumed", func() bool { mu.Lock(); defer mu.Unlock(); return len(consumedAt) >= 150 })
	c1.crash()
	crashAt := time.Now()
	mu.Lock()
	first := consumedAt
	consumedAt = map[string]time.Time{}
	mu.Unlock()
	// The dead process's last oneway offset updates may still be on their
	// way, so the restart point is what the next consumer reads from the
	// broker (QUERY_CONSUMER_OFFSET as it takes each queue), not a read of
	// the broker's offsets at some moment after the crash.
	c2, col := startCollecting(t, be.ns, "g", "T")
	testwait.For(t, testwait.Default, "both queues at the new consumer", func() bool { return countTopic(c2.Assigned(), "T") == 2 })
	var committed int64
	for _, qs := range c2.queueStates() {
		if qs.mq.Topic == "T" {
			committed += qs.start
		}
	}
	testwait.For(t, testwait.Default, "the rest", func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		for i := range 400 {
			b := fmt.Sprintf("m-%05d", i)
			if first[b].IsZero() && col.count[b] == 0 {
				return false
			}
		}
		return true
	})
	redelivered, recent := 0, 0
	col.mu.Lock()
	for b := range col.count {
		if !first[b].IsZero() {
			redelivered++
		}
	}
	col.mu.Unlock()
	for _, at := range first {
		// Consumed within the last persist window (twice, for the timer's
		// phase) before the crash.
		if at.After(crashAt.Add(-2 * persist)) {
			recent++
		}
	}
	if int64(len(first))-committed != int64(redelivered) {
		t.Fatalf("consumed %d before the crash, broker had %d committed, but %d re-delivered: restart point is not the committed offset",
			len(first), committed, redelivered)
	}
	if redelivered > recent {
		t.Fatalf("%d re-delivered after a crash, but only %d were consumed in the last persist window", redelivered, recent)
	}
	t.Logf("consumed %d before crash, %d re-delivered, %d in the window", len(first), redelivered, recent)
}

func TestSlowListenerBoundedByFlowControl(t *testing.T) {
	forBackends(t, 1, testSlowListenerBoundedByFlowControl)
}

func testSlowListenerBoundedByFlowControl(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 1)
	const threshold, batch = 50, 16
	produce(t, p, "T", 0, 300)
	release := make(chan struct{})
	var consumed atomic.Int64
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Flow.PullThresholdForQueue = threshold
		cfg.Flow.FlowControlDelay = 5 * time.Millisecond
		cfg.PullBatchSize = batch
		cfg.ConsumeGoroutines = 4
		cfg.Concurrently = func(ctx context.Context, msgs []*MessageExt) ConsumeResult {
			select {
			case <-release:
			case <-ctx.Done():
			}
			consumed.Add(int64(len(msgs)))
			return ConsumeSuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	mq := queue.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	maxSeen := int64(0)
	check := func() {
		if s, ok := cons.QueueStats()[mq]; ok {
			maxSeen = max(maxSeen, s.Count)
			if s.Count > threshold+batch {
				t.Fatalf("process queue holds %d messages; threshold %d + one batch %d", s.Count, threshold, batch)
			}
		}
	}
	// Blocked listener: the queue fills up to the threshold and stops.
	testwait.For(t, testwait.Default, "queue filled", func() bool { check(); return maxSeen > threshold })
	// It stays there: every pull the loop tries now is refused by flow
	// control (5 ms apart), and none may push the queue past its bound.
	paused := cons.flowLog.Count()
	testwait.For(t, testwait.Default, "30 pulls paused by flow control", func() bool { check(); return cons.flowLog.Count() >= paused+30 })
	close(release)
	testwait.For(t, testwait.Default, "all consumed", func() bool { check(); return consumed.Load() >= 300 })
}

func TestTagFilterAndRetryTopic(t *testing.T) {
	forBackends(t, 1, testTagFilterAndRetryTopic)
}

func testTagFilterAndRetryTopic(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 2)
	ctx := context.Background()
	for i, tag := range []string{"A", "B", "C", "A", "B", "C"} {
		if _, err := p.Send(ctx, &Message{Topic: "T", Tags: tag, Body: []byte(fmt.Sprintf("%s-%d", tag, i))}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	got := map[string][]int32{}
	var retryTopic string
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Concurrently = func(_ context.Context, msgs []*MessageExt) ConsumeResult {
			mu.Lock()
			defer mu.Unlock()
			m := msgs[0]
			got[string(m.Body)] = append(got[string(m.Body)], m.ReconsumeTimes)
			if m.Tags() == "A" && m.ReconsumeTimes == 0 {
				return ConsumeRetryLater
			}
			if m.ReconsumeTimes > 0 {
				retryTopic = m.Topic
			}
			return ConsumeSuccess
		}
	})
	startConsumer(t, cons, "T", "A || B")
	testwait.For(t, testwait.Default, "A messages redelivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got["A-0"]) == 2 && len(got["A-3"]) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	for body, times := range got {
		if strings.HasPrefix(body, "C") {
			t.Fatalf("tag C delivered to an A || B subscription: %s", body)
		}
		if strings.HasPrefix(body, "B") && len(times) != 1 {
			t.Fatalf("%s delivered %d times", body, len(times))
		}
	}
	if len(got) != 4 {
		t.Fatalf("delivered %v, want A and B messages", got)
	}
	if got["A-0"][1] != 1 || retryTopic != "T" {
		t.Fatalf("retry delivery: reconsumeTimes %v, topic %q (want 1, T)", got["A-0"], retryTopic)
	}
	if n := be.taps[0].Count(brokertap.Code(protocol.ReqConsumerSendMsgBack)); n != 2 {
		t.Fatalf("%d CONSUMER_SEND_MSG_BACK, want 2", n)
	}
}

func TestBroadcastingEveryConsumerGetsAll(t *testing.T) {
	forBackends(t, 1, testBroadcastingEveryConsumerGetsAll)
}

func testBroadcastingEveryConsumerGetsAll(t *testing.T, be *backend) {
	p := be.producerOnNewTopic(t, "T", 3)
	dir := t.TempDir()
	cols := []*collector{newCollector(), newCollector()}
	var cons []*PushConsumer
	for _, col := range cols {
		x := newConsumer(t, be.ns, "bg", func(cfg *PushConsumerConfig) {
			cfg.Model = Broadcasting
			cfg.LocalOffsetDir = dir
			cfg.Concurrently = col.listener()
		})
		startConsumer(t, x, "T", "*")
		cons = append(cons, x)
	}
	produce(t, p, "T", 0, 60)
	for i, col := range cols {
		testwait.For(t, testwait.Default, fmt.Sprintf("consumer %d has all 60", i), func() bool { return col.distinct() == 60 })
	}
	if err := cons[0].Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Offsets went to the local file, not the broker.
	for _, off := range be.committed(t, "bg", "T") {
		if off > 0 {
			t.Fatalf("broadcasting committed %d on the broker", off)
		}
	}
	path, _ := offset.LocalFilePath(dir, cons[0].cfg.Client.ClientID(), "bg")
	lf, err := offset.OpenLocalFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, off := range lf.Snapshot("T") {
		sum += off
	}
	if sum != 60 {
		t.Fatalf("local offsets sum to %d, want 60", sum)
	}
}

func TestOrderlyConsumerKeepsKeyOrderAndUnlocks(t *testing.T) {
	forBackends(t, 1, testOrderlyConsumerKeepsKeyOrderAndUnlocks)
}

func testOrderlyConsumerKeepsKeyOrderAndUnlocks(t *testing.T, be *backend) {
	be.createTopic(t, "T", 4)
	p := startProducer(t, be.ns, func(cfg *ProducerConfig) { cfg.Selector = HashSelector{} })
	ctx := context.Background()
	const keys, per = 8, 30
	for i := range per {
		for k := range keys {
			if _, err := p.Send(ctx, &Message{Topic: "T", ShardingKey: fmt.Sprintf("k%d", k), Body: []byte(fmt.Sprintf("k%d-%03d", k, i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	last := map[string]int{}
	var inFlight sync.Map // queue -> *atomic.Int32
	suspended := false
	cons := newConsumer(t, be.ns, "og", func(cfg *PushConsumerConfig) {
		cfg.ConsumeBatchSize = 3
		cfg.SuspendCurrentQueueTime = 20 * time.Millisecond
		cfg.Orderly = func(_ context.Context, msgs []*MessageExt) OrderlyResult {
			v, _ := inFlight.LoadOrStore(msgs[0].Queue, new(atomic.Int32))
			n := v.(*atomic.Int32)
			if n.Add(1) != 1 {
				t.Errorf("two goroutines consume %v at once", msgs[0].Queue)
			}
			defer n.Add(-1)
			mu.Lock()
			defer mu.Unlock()
			if !suspended && string(msgs[0].Body) == "k3-010" {
				suspended = true
				return OrderlySuspend // the same batch must come back before anything after it
			}
			for _, m := range msgs {
				var k string
				var i int
				fmt.Sscanf(strings.Replace(string(m.Body), "-", " ", 1), "%s %d", &k, &i)
				if prev, ok := last[k]; ok && i != prev+1 {
					t.Errorf("key %s: %d after %d", k, i, prev)
				}
				last[k] = i
			}
			return OrderlySuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	testwait.For(t, testwait.Default, "all keys done", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(last) != keys {
			return false
		}
		for _, i := range last {
			if i != per-1 {
				return false
			}
		}
		return true
	})
	mq := protocol.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	if h, _ := be.broker(0).LockOwner("og", mq); h != cons.cfg.Client.ClientID() {
		t.Fatalf("lock of %v held by %q, want %q", mq, h, cons.cfg.Client.ClientID())
	}
	if err := cons.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if h, held := be.broker(0).LockOwner("og", mq); held {
		t.Fatalf("lock still held by %q after Shutdown", h)
	}
	if got := sum(be.committed(t, "og", "T")); got != keys*per {
		t.Fatalf("orderly committed %d, want %d", got, keys*per)
	}
}
