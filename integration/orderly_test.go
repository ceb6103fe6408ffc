//go:build !race

// The official client's orderly push consumer races with itself: its pull
// goroutine puts messages into a process queue (an unsynchronised
// gods treemap) while the orderly consume goroutine takes them
// (processQueue.putMessage vs takeMessages), which the race detector
// reports and which fails the test binary. This file is built without
// -race only; the broker side (LOCK_BATCH_MQ) is also covered under -race
// by TestLockBatch and TestLockExpiryOnTheWire in package broker and by
// package broker/lock.

package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestOrderlyConsumer: an orderly push consumer locks its queues with
// LOCK_BATCH_MQ before consuming and receives each sharding key's
// messages in send order.
func TestOrderlyConsumer(t *testing.T) {
	c := cluster.Start(t)
	const topic = "Ordered"
	createTopic(t, c, 0, topic, 4)
	p := newProducer(t, c, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	const keys, per = 3, 20
	for i := range per {
		for k := range keys {
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("k%d:%d", k, i)))
			m.WithShardingKey(fmt.Sprintf("key-%d", k))
			if _, err := p.SendSync(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	seen := map[string][]int{}
	total := 0
	newPushConsumer(t, c, "g-orderly", topic, "*", func(m *primitive.MessageExt) {
		key, seq, _ := strings.Cut(string(m.Body), ":")
		n, _ := strconv.Atoi(seq)
		mu.Lock()
		seen[key] = append(seen[key], n)
		total++
		mu.Unlock()
	}, consumer.WithConsumerOrder(true))
	testwait.For(t, 30*time.Second, "every ordered message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return total >= keys*per
	})
	mu.Lock()
	defer mu.Unlock()
	for key, seqs := range seen {
		for i, n := range seqs {
			if n != i {
				t.Fatalf("%s out of order: %v", key, seqs)
			}
		}
	}
}

// orderRecorder checks what two orderly consumers see: per sharding key,
// sequence numbers in send order (a replay of already seen numbers, which
// a queue handover after an uncommitted offset may cause, is counted but
// never a jump ahead); and per queue, never two consumers inside the
// listener at once.
type orderRecorder struct {
	mu       sync.Mutex
	busy     map[int]int // queue -> consumer inside the listener for it
	overlaps []string
	last     map[string]int // key -> highest sequence seen
	gaps     []string
	replays  int
	queues   map[int]map[int]bool // consumer -> queues received from
}

func newOrderRecorder() *orderRecorder {
	return &orderRecorder{busy: map[int]int{}, last: map[string]int{}, queues: map[int]map[int]bool{}}
}

func (r *orderRecorder) listener(me int) func(*primitive.MessageExt) consumer.ConsumeResult {
	return func(m *primitive.MessageExt) consumer.ConsumeResult {
		q := m.Queue.QueueId
		r.mu.Lock()
		if other, ok := r.busy[q]; ok && other != me {
			r.overlaps = append(r.overlaps, fmt.Sprintf("queue %d: consumer %d entered while %d was consuming it", q, me, other))
		}
		r.busy[q] = me
		if r.queues[me] == nil {
			r.queues[me] = map[int]bool{}
		}
		r.queues[me][q] = true
		key, seqStr, _ := strings.Cut(string(m.Body), ":")
		seq, _ := strconv.Atoi(seqStr)
		switch last, seen := r.last[key]; {
		case seen && seq <= last:
			r.replays++
		case seq != last+1 && (seen || seq != 0):
			r.gaps = append(r.gaps, fmt.Sprintf("%s: %d after %d (consumer %d, queue %d)", key, seq, last, me, q))
			r.last[key] = seq
		default:
			r.last[key] = seq
		}
		r.mu.Unlock()
		// Stay inside a moment, so a second consumer on the queue would be seen.
		time.Sleep(time.Millisecond)
		r.mu.Lock()
		delete(r.busy, q)
		r.mu.Unlock()
		return consumer.ConsumeSuccess
	}
}

func (r *orderRecorder) queuesOf(c int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queues[c])
}

// covered counts the queues any of cs received from.
func (r *orderRecorder) covered(cs ...int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := map[int]bool{}
	for _, c := range cs {
		for q := range r.queues[c] {
			all[q] = true
		}
	}
	return len(all)
}

func (r *orderRecorder) resetQueues(c int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queues[c] = nil
}

func (r *orderRecorder) caughtUp(sent map[string]int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, n := range sent {
		if last, ok := r.last[k]; !ok || last != n-1 {
			return false
		}
	}
	return true
}

// orderedSender sends key:seq messages round-robin over keys, each key to
// its queue (hash selector), until stopped.
type orderedSender struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	sent map[string]int // key -> messages sent
	err  error
}

func startOrderedSender(t *testing.T, c *cluster.Cluster, topic string, keys int) *orderedSender {
	p := newProducer(t, c, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	s := &orderedSender{stop: make(chan struct{}), done: make(chan struct{}), sent: map[string]int{}}
	go func() {
		defer close(s.done)
		for i := 0; ; i++ {
			select {
			case <-s.stop:
				return
			default:
			}
			key := fmt.Sprintf("key-%d", i%keys)
			s.mu.Lock()
			seq := s.sent[key]
			s.mu.Unlock()
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s:%d", key, seq)))
			m.WithShardingKey(key)
			if _, err := p.SendSync(context.Background(), m); err != nil {
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				return
			}
			s.mu.Lock()
			s.sent[key]++
			s.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	t.Cleanup(s.halt)
	return s
}

func (s *orderedSender) halt() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// result stops the sender and returns what it sent.
func (s *orderedSender) result(t *testing.T) map[string]int {
	t.Helper()
	s.halt()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		t.Fatalf("send: %v", s.err)
	}
	out := map[string]int{}
	for k, v := range s.sent {
		out[k] = v
	}
	return out
}

// TestOrderlyTwoConsumers: two orderly consumers (ConsumeOrderly) of one
// group while a producer keeps sending per sharding key. The second
// consumer gets the queues the first gives up only once the first's locks
// on them expire (the client drops a queue at rebalance without
// unlocking; LockMaxLiveTime is 3 s here); when the first stops it
// unlocks, and its queues move to the second at once. Throughout, each
// key's messages arrive in send order and no queue is ever inside both
// listeners at the same time.
func TestOrderlyTwoConsumers(t *testing.T) {
	const lockLive = 3 * time.Second
	c := rcCluster(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.LockMaxLiveTime = lockLive }))
	const topic, group = "OrderlyG", "g-orderly-two"
	createTopic(t, c, 0, topic, 4)
	createTopic(t, c, 0, "%RETRY%"+group, 1) // see TestRetryLater
	r := newOrderRecorder()
	// Owners renew every 500 ms, well inside the 3 s lock life.
	opts := []consumer.Option{consumer.WithConsumerOrder(true), consumer.WithRebalanceLockInterval(500 * time.Millisecond)}

	a := startListener(t, c, group, topic, "", r.listener(0), opts...)
	s := startOrderedSender(t, c, topic, 8)
	testwait.For(t, 30*time.Second, "the first consumer on all 4 queues", func() bool { return r.queuesOf(0) == 4 })

	bStart := time.Now()
	startListener(t, c, group, topic, "", r.listener(1), opts...)
	// The second consumer's share is still locked by the first; it gets it
	// at a rebalance (every 20 s in the client) after the locks expired.
	testwait.For(t, 45*time.Second, "the second consumer on 2 queues", func() bool { return r.queuesOf(1) == 2 })
	if took := time.Since(bStart); took < lockLive {
		t.Fatalf("second consumer consumed after %v, before the first's locks could expire", took)
	}
	r.resetQueues(0)
	r.resetQueues(1)
	// The sender feeds every queue: once each has delivered since the
	// reset, a queue the first consumer still held would have shown.
	testwait.For(t, testwait.Default, "every queue delivered since the handover", func() bool { return r.covered(0, 1) == 4 })
	if n := r.queuesOf(0); n > 2 {
		t.Fatalf("first consumer still consumes %d queues after the handover", n)
	}

	a.shutdown() // UNLOCK_BATCH_MQ, then unregister: the broker notifies the second
	stopped := time.Now()
	r.resetQueues(1)
	testwait.For(t, 15*time.Second, "the second consumer on all 4 queues", func() bool { return r.queuesOf(1) == 4 })
	if took := time.Since(stopped); took > 10*time.Second {
		t.Fatalf("released queues taken over after %v", took)
	}

	sent := s.result(t)
	testwait.For(t, 30*time.Second, "every message consumed", func() bool { return r.caughtUp(sent) })
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.overlaps) > 0 {
		t.Fatalf("queues consumed by both consumers at once: %v", r.overlaps)
	}
	if len(r.gaps) > 0 {
		t.Fatalf("messages out of send order: %v", r.gaps)
	}
	total := 0
	for _, n := range sent {
		total += n
	}
	t.Logf("%d messages over %d keys, %d replayed after handovers", total, len(sent), r.replays)
}

// TestOrderlyDeadLetter: an orderly listener that keeps answering
// SUSPEND_CURRENT_QUEUE_A_MOMENT retries locally until MaxReconsumeTimes,
// then the client sends the message back with delay level -1 and the
// broker puts it straight into %DLQ%<group>; the queue then moves on to
// the next message.
func TestOrderlyDeadLetter(t *testing.T) {
	c := rcCluster(t)
	const topic, group = "OrderlyDead", "g-orderly-dead"
	createTopic(t, c, 0, topic, 1)
	createTopic(t, c, 0, "%RETRY%"+group, 1) // see TestRetryLater
	p := newProducer(t, c)
	for _, body := range []string{"poison", "next"} {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body))); err != nil {
			t.Fatal(err)
		}
	}
	d := newDeliveries()
	startListener(t, c, group, topic, "", func(m *primitive.MessageExt) consumer.ConsumeResult {
		d.add(m)
		if string(m.Body) == "poison" {
			return consumer.SuspendCurrentQueueAMoment
		}
		return consumer.ConsumeSuccess
	}, consumer.WithConsumerOrder(true), consumer.WithMaxReconsumeTimes(1),
		consumer.WithSuspendCurrentQueueTimeMillis(100*time.Millisecond))
	testwait.For(t, 30*time.Second, "the next message after the poison one", func() bool { return len(d.of("next")) == 1 })
	// The official client gives up once a failed message's local count
	// exceeds the maximum: reconsume times 0, 1 and 2 reach the listener.
	if n := len(d.of("poison")); n != 3 {
		t.Fatalf("poison delivered %d times, want 3", n)
	}
	if first, next := d.of("poison")[2].at, d.of("next")[0].at; next.Before(first) {
		t.Fatal("next consumed before the poison message was given up")
	}
	st := c.Broker(0).Store()
	testwait.For(t, testwait.Default, "the poison message in the DLQ", func() bool { return st.MaxOffset("%DLQ%"+group, 0) == 1 })
	if st.MaxOffset("%RETRY%"+group, 0) != 0 || st.MaxOffset("SCHEDULE_TOPIC_XXXX", 0)+st.MaxOffset("SCHEDULE_TOPIC_XXXX", 2) != 0 {
		t.Fatal("delay level -1 went through retry or the schedule topic")
	}
}
