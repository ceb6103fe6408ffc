//go:build !race

// These tests drive the official client's consumers, which report data races
// inside themselves under -race (their rebalance against their own offset
// store and pull paths). They run in the test command's race-free pass, so a
// race of theirs cannot fail CI for a reason that is not ours.

package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

// queueRecorder records, per consumer, the queues it received from and
// every body.
type queueRecorder struct {
	mu     sync.Mutex
	queues map[int]map[int]bool // consumer -> queue ids
	bodies map[string]int       // body -> times received
}

func newQueueRecorder() *queueRecorder {
	return &queueRecorder{queues: map[int]map[int]bool{}, bodies: map[string]int{}}
}

func (r *queueRecorder) fn(consumer int) func(*primitive.MessageExt) {
	return func(m *primitive.MessageExt) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.queues[consumer] == nil {
			r.queues[consumer] = map[int]bool{}
		}
		r.queues[consumer][m.Queue.QueueId] = true
		r.bodies[string(m.Body)]++
	}
}

func (r *queueRecorder) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *queueRecorder) queuesOf(consumer int) map[int]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int]bool{}
	for q := range r.queues[consumer] {
		out[q] = true
	}
	return out
}

func (r *queueRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queues = map[int]map[int]bool{}
}

func sendN(t *testing.T, p interface {
	SendSync(context.Context, ...*primitive.Message) (*primitive.SendResult, error)
}, topic, prefix string, n int, tag string) {
	t.Helper()
	for i := range n {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", prefix, i)))
		if tag != "" {
			m.WithTag(tag)
		}
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatalf("send %s-%d: %v", prefix, i, err)
		}
	}
}

// TestClusteringSplitAndRebalance: two push consumers of one group split
// the queues and together receive every message; a third joins and, after
// the broker's NOTIFY_CONSUMER_IDS_CHANGED, gets queues of its own well
// before the clients' 20 s periodic rebalance.
func TestClusteringSplitAndRebalance(t *testing.T) {
	c := cluster.Start(t)
	const topic, group = "Split", "g-split"
	createTopic(t, c, 0, topic, 6)
	p := newProducer(t, c)
	rec := newQueueRecorder()
	newPushConsumer(t, c, group, topic, "*", rec.fn(0))
	newPushConsumer(t, c, group, topic, "*", rec.fn(1))
	// Both members are registered before messages flow, so the split is
	// settled: wait for the broker to list two clients.
	eventually(t, 10*time.Second, "two members", func() bool {
		return len(c.Broker(0).ConsumerIDs(group)) == 2
	})
	time.Sleep(500 * time.Millisecond) // the notification-driven rebalance settles
	rec.reset()

	const n = 60
	sendN(t, p, topic, "first", n, "")
	eventually(t, 20*time.Second, "every message", func() bool { return rec.distinct() == n })
	q0, q1 := rec.queuesOf(0), rec.queuesOf(1)
	if len(q0) == 0 || len(q1) == 0 {
		t.Fatalf("queues not split: consumer0 %v consumer1 %v", q0, q1)
	}
	for q := range q0 {
		if q1[q] {
			t.Errorf("queue %d consumed by both", q)
		}
	}
	if len(q0)+len(q1) != 6 {
		t.Errorf("queues covered: %v + %v, want 6", q0, q1)
	}

	newPushConsumer(t, c, group, topic, "*", rec.fn(2))
	eventually(t, 10*time.Second, "three members", func() bool {
		return len(c.Broker(0).ConsumerIDs(group)) == 3
	})
	start := time.Now()
	// Keep sending until the newcomer gets a message: it must own queues
	// after the notification, long before a 20 s periodic rebalance.
	for i := 0; len(rec.queuesOf(2)) == 0; i++ {
		if time.Since(start) > 12*time.Second {
			t.Fatalf("third consumer got no queue within %v", time.Since(start))
		}
		sendN(t, p, topic, fmt.Sprintf("second-%d", i), 6, "")
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTagSubscription: a subscription "A || C" receives exactly the
// messages tagged A and C.
func TestTagSubscription(t *testing.T) {
	c := cluster.Start(t)
	const topic = "Tags"
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c)
	for i := range 40 {
		tag := string(rune('A' + i%4))
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", tag, i)))
		m.WithTag(tag)
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	got := newCollector()
	newPushConsumer(t, c, "g-tags", topic, "A || C", got.add)
	eventually(t, 20*time.Second, "20 messages", func() bool { return got.len() == 20 })
	time.Sleep(300 * time.Millisecond) // nothing else may arrive
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.msgs) != 20 {
		t.Errorf("received %d messages, want 20", len(got.msgs))
	}
	for body, m := range got.msgs {
		if tag := m.GetTags(); tag != "A" && tag != "C" {
			t.Errorf("received %s with tag %q", body, tag)
		}
	}
}

// TestResumeFromCommittedOffsets: a group consumes, stops, and a new
// instance of the group receives only what was sent since; then the
// broker restarts and the offsets are still there.
func TestResumeFromCommittedOffsets(t *testing.T) {
	c := cluster.Start(t)
	const topic, group = "Resume", "g-resume"
	createTopic(t, c, 0, topic, 4)
	p := newProducer(t, c)

	sendN(t, p, topic, "one", 40, "")
	first := newCollector()
	pc := newPushConsumer(t, c, group, topic, "*", first.add)
	eventually(t, 20*time.Second, "first batch", func() bool { return first.len() == 40 })
	pc.shutdown() // persists its offsets with oneway updates as it closes
	// Those updates travel on the old connection and the new instance's
	// offset queries on another; the broker orders requests per connection,
	// not across them, so wait until the updates are applied.
	waitCommitted(t, c, group, topic, 40)

	sendN(t, p, topic, "two", 40, "")
	second := newCollector()
	pc = newPushConsumer(t, c, group, topic, "*", second.add)
	eventually(t, 20*time.Second, "second batch", func() bool { return second.len() >= 40 })
	time.Sleep(300 * time.Millisecond)
	checkOnly(t, second, "two", 40)
	pc.shutdown()
	// The final offset updates are oneway frames sent as the client closes
	// its socket; wait until the broker has applied them before restarting.
	waitCommitted(t, c, group, topic, 80)

	c.RestartBroker(0)
	sendN(t, p, topic, "three", 40, "")
	third := newCollector()
	newPushConsumer(t, c, group, topic, "*", third.add)
	eventually(t, 30*time.Second, "third batch", func() bool { return third.len() >= 40 })
	time.Sleep(300 * time.Millisecond)
	checkOnly(t, third, "three", 40)
}

// checkOnly asserts got holds exactly n messages, all with the prefix.
func checkOnly(t *testing.T, got *collector, prefix string, n int) {
	t.Helper()
	got.mu.Lock()
	defer got.mu.Unlock()
	for body := range got.msgs {
		if len(body) < len(prefix) || body[:len(prefix)] != prefix {
			t.Errorf("redelivered %s: the committed offset was not used", body)
		}
	}
	if len(got.msgs) != n {
		t.Errorf("received %d distinct messages, want %d", len(got.msgs), n)
	}
}

// TestIdleConsumerDoesNotPoll: a subscribed push consumer on an idle topic
// has its pulls held by the broker, so over two seconds it sends at most
// a few pulls (one per queue, renewed every 20 s), not a busy loop.
func TestIdleConsumerDoesNotPoll(t *testing.T) {
	c := cluster.Start(t)
	createTopic(t, c, 0, "Quiet", 4)
	newPushConsumer(t, c, "g-quiet", "Quiet", "*", func(*primitive.MessageExt) {})
	// The first pulls of all four queues are held once the count settles.
	eventually(t, 10*time.Second, "pulls started", func() bool { return c.Broker(0).PullRequests() >= 4 })
	time.Sleep(500 * time.Millisecond)
	before := c.Broker(0).PullRequests()
	time.Sleep(2 * time.Second)
	if n := c.Broker(0).PullRequests() - before; n > 4 {
		t.Fatalf("%d pull requests in 2 s from an idle consumer", n)
	}
}

// waitCommitted waits until the group's committed offsets over the topic's
// four queues add up to want.
func waitCommitted(t *testing.T, c *cluster.Cluster, group, topic string, want int64) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("offsets of %s committed up to %d", group, want), func() bool {
		var sum int64
		for q := range int32(4) {
			off, _ := c.Broker(0).ConsumerOffset(group, topic, q)
			sum += off
		}
		return sum == want
	})
}
