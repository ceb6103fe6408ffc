//go:build !race

// The SDK's push consumer races inside itself under -race (its process
// queues share state unguarded); scripts/test.sh runs these in its
// second pass, without -race.

package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// shortPolls holds push consumers' receives 5 s, not the proxy's 20 s: a
// message whose invisible time passed is brought back by the next
// receive, which the test then waits less for.
var shortPolls = cluster.Configure(func(_ int, cfg *config.Config) { cfg.GRPC.MaxLongPolling = 5 * time.Second })

// newV5PushConsumer starts an SDK push consumer of group on broker 0.
func newV5PushConsumer(t testing.TB, c *cluster.Cluster, group, topic string, listen func(*rmq5.MessageView) rmq5.ConsumerResult) rmq5.PushConsumer {
	t.Helper()
	pc, err := rmq5.NewPushConsumer(v5Config(c, 0, group, nil),
		rmq5.WithPushSubscriptionExpressions(map[string]*rmq5.FilterExpression{topic: rmq5.SUB_ALL}),
		rmq5.WithPushMessageListener(&rmq5.FuncMessageListener{Consume: listen}),
		rmq5.WithPushConsumptionThreadCount(4))
	return startedV5(t, "push consumer", pc, err)
}

// TestV5PushConsumerConcurrent: two push consumers of one group share a
// topic: every message is consumed, by one or the other, and a delivery
// the listener fails comes back (the SDK's nack: a shorter invisible
// time) with its attempt raised, until it succeeds.
func TestV5PushConsumerConcurrent(t *testing.T) {
	c := startV5(t, shortPolls)
	topic, group := "V5Push", "v5-push"
	p := newV5Producer(t, c, []string{topic})
	var mu sync.Mutex
	consumed := map[string]int{} // body -> successful consumptions
	by := map[int]int{}          // consumer -> messages
	attempts := map[string]int32{}
	listen := func(who int) func(*rmq5.MessageView) rmq5.ConsumerResult {
		return func(mv *rmq5.MessageView) rmq5.ConsumerResult {
			mu.Lock()
			defer mu.Unlock()
			body := string(mv.GetBody())
			attempts[body] = max(attempts[body], mv.GetDeliveryAttempt())
			if body == "fail-once" && mv.GetDeliveryAttempt() == 1 {
				return rmq5.FAILURE
			}
			consumed[body]++
			by[who]++
			return rmq5.SUCCESS
		}
	}
	newV5PushConsumer(t, c, group, topic, listen(1))
	newV5PushConsumer(t, c, group, topic, listen(2))
	const n = 40
	for i := range n {
		v5Send(t, p, &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprint(i))})
	}
	v5Send(t, p, &rmq5.Message{Topic: topic, Body: []byte("fail-once")})
	testwait.For(t, 30*time.Second, "every message consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(consumed) == n+1
	})
	mu.Lock()
	defer mu.Unlock()
	for body, k := range consumed {
		if k != 1 {
			t.Errorf("%s consumed %d times", body, k)
		}
	}
	if attempts["fail-once"] != 2 {
		t.Errorf("the failed message came back at attempt %d, want 2", attempts["fail-once"])
	}
	if len(c.Broker(0).ConsumerIDs(group)) != 2 {
		t.Errorf("group members %v, want the two push consumers", c.Broker(0).ConsumerIDs(group))
	}
	t.Logf("consumer 1: %d, consumer 2: %d", by[1], by[2])
}

// TestV5PushConsumerFIFO: a FIFO group (consumeMessageOrderly) consumes
// each message group in the order sent, never two of one group at once.
func TestV5PushConsumerFIFO(t *testing.T) {
	c := startV5(t, shortPolls)
	topic, group := "V5PushFIFO", "v5-push-fifo"
	g := groupconf.New(group)
	g.ConsumeMessageOrderly = true
	if err := c.Broker(0).Core().UpdateGroup(g, "test"); err != nil {
		t.Fatal(err)
	}
	p := newV5Producer(t, c, []string{topic})
	groups := []string{"a", "b", "c"}
	const perGroup = 10
	var mu sync.Mutex
	seq := map[string][]int{}
	busy := map[string]bool{}
	overlap := false
	newV5PushConsumer(t, c, group, topic, func(mv *rmq5.MessageView) rmq5.ConsumerResult {
		mg := *mv.GetMessageGroup()
		mu.Lock()
		if busy[mg] {
			overlap = true
		}
		busy[mg] = true
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		var i int
		fmt.Sscan(string(mv.GetBody()), &i)
		mu.Lock()
		seq[mg] = append(seq[mg], i)
		busy[mg] = false
		mu.Unlock()
		return rmq5.SUCCESS
	})
	for i := range perGroup {
		for _, mg := range groups {
			m := &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprint(i))}
			m.SetMessageGroup(mg)
			v5Send(t, p, m)
		}
	}
	testwait.For(t, 40*time.Second, "every group consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, mg := range groups {
			if len(seq[mg]) < perGroup {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	for _, mg := range groups {
		for i, v := range seq[mg] {
			if v != i {
				t.Fatalf("group %s consumed %v, want 0..%d in order", mg, seq[mg], perGroup-1)
			}
		}
	}
	if overlap {
		t.Fatal("two messages of one group were consumed at once")
	}
}

// TestV5DLQAfterMaxAttempts: a message the listener always fails is
// delivered the group's max attempts (retryMaxTimes + 1) times, then goes
// to the group's %DLQ%, where it stays readable.
func TestV5DLQAfterMaxAttempts(t *testing.T) {
	c := startV5(t, shortPolls)
	topic, group := "V5DLQ", "v5-dlq"
	g := groupconf.New(group)
	g.RetryMaxTimes = 1 // two deliveries
	if err := c.Broker(0).Core().UpdateGroup(g, "test"); err != nil {
		t.Fatal(err)
	}
	p := newV5Producer(t, c, []string{topic})
	var mu sync.Mutex
	var seen []int32
	newV5PushConsumer(t, c, group, topic, func(mv *rmq5.MessageView) rmq5.ConsumerResult {
		mu.Lock()
		seen = append(seen, mv.GetDeliveryAttempt())
		mu.Unlock()
		return rmq5.FAILURE
	})
	r := v5Send(t, p, &rmq5.Message{Topic: topic, Body: []byte("poison")})
	dlq := "%DLQ%" + group
	testwait.For(t, 40*time.Second, "the message in the DLQ", func() bool {
		_, ok := c.Broker(0).Core().Topic(dlq)
		return ok && len(readTopic(t, c, 0, dlq)) == 1
	})
	if got := readTopic(t, c, 0, dlq)[0]; got.UniqKey() != r.MessageID || string(got.Body) != "poison" {
		t.Fatalf("DLQ holds %s %q", got.UniqKey(), got.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != 1 || seen[1] != 2 {
		t.Fatalf("deliveries %v, want attempts 1 and 2", seen)
	}
}

// TestV5PushConsumerSlowListenerRenewed: a push consumer's listener that
// runs longer than the receive's invisible time does not see its message
// again: the door keeps renewing it (the proxy's auto-renew), and the
// SDK's ack with the handle it received settles the renewed message.
func TestV5PushConsumerSlowListenerRenewed(t *testing.T) {
	c := startV5(t, shortPolls, cluster.Configure(func(_ int, cfg *config.Config) {
		r := &cfg.GRPC.Renewal
		r.Invisible, r.Ahead, r.Slice, r.Period = 2*time.Second, time.Second, 2*time.Second, 100*time.Millisecond
	}))
	topic, group := "V5Renew", "v5-renew"
	p := newV5Producer(t, c, []string{topic})
	var mu sync.Mutex
	deliveries, done := map[string]int{}, map[string]bool{}
	newV5PushConsumer(t, c, group, topic, func(mv *rmq5.MessageView) rmq5.ConsumerResult {
		body := string(mv.GetBody())
		mu.Lock()
		deliveries[body]++
		mu.Unlock()
		if body == "slow" {
			time.Sleep(5 * time.Second) // more than twice the invisible time
		}
		mu.Lock()
		done[body] = true
		mu.Unlock()
		return rmq5.SUCCESS
	})
	for _, b := range []string{"slow", "quick"} {
		v5Send(t, p, &rmq5.Message{Topic: topic, Body: []byte(b)})
	}
	testwait.For(t, 30*time.Second, "both messages consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done["slow"] && done["quick"]
	})
	b := c.Broker(0)
	testwait.For(t, 10*time.Second, "both acknowledged and nothing renewed", func() bool {
		return b.Core().InFlight(group, topic) == 0 && b.GRPC().Renewing() == 0
	})
	mu.Lock()
	defer mu.Unlock()
	if deliveries["slow"] != 1 || deliveries["quick"] != 1 {
		t.Fatalf("deliveries %v, want each message once", deliveries)
	}
}
