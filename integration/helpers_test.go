package integration

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/integration/cluster"
)

func TestMain(m *testing.M) {
	// The official client logs every rebalance and reconnect at info.
	rlog.SetLogLevel("error")
	os.Exit(m.Run())
}

var instanceSeq atomic.Int64

// instance returns a unique client instance name: official clients with
// the same instance name in one process share a client id and connections,
// and the broker then sees two consumers of a group as one.
func instance(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), instanceSeq.Add(1))
}

func newProducer(t testing.TB, c *cluster.Cluster, opts ...producer.Option) rocketmq.Producer {
	t.Helper()
	all := append([]producer.Option{
		producer.WithNameServer([]string{c.NamesrvAddr()}),
		producer.WithInstanceName(instance("p")),
		producer.WithGroupName("pg-" + t.Name()),
		producer.WithRetry(2),
	}, opts...)
	p, err := rocketmq.NewProducer(all...)
	if err != nil {
		t.Fatalf("new producer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("start producer: %v", err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// pushConsumer is a started push consumer; stop it with shutdown (also run
// at cleanup).
type pushConsumer struct {
	rocketmq.PushConsumer
	once sync.Once
}

func (pc *pushConsumer) shutdown() { pc.once.Do(func() { _ = pc.Shutdown() }) }

func newPushConsumer(t testing.TB, c *cluster.Cluster, group, topic, expr string,
	fn func(*primitive.MessageExt), opts ...consumer.Option) *pushConsumer {
	t.Helper()
	return startListener(t, c, group, topic, expr, func(m *primitive.MessageExt) consumer.ConsumeResult {
		fn(m)
		return consumer.ConsumeSuccess
	}, opts...)
}

// startListener starts a push consumer whose listener decides each
// message's result; a batch fails if any of its messages does. expr is a
// tag expression ("" or "*" for all).
func startListener(t testing.TB, c *cluster.Cluster, group, topic, expr string,
	fn func(*primitive.MessageExt) consumer.ConsumeResult, opts ...consumer.Option) *pushConsumer {
	t.Helper()
	all := append([]consumer.Option{
		consumer.WithNameServer([]string{c.NamesrvAddr()}),
		consumer.WithInstance(instance("c")),
		consumer.WithGroupName(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}, opts...)
	pc, err := rocketmq.NewPushConsumer(all...)
	if err != nil {
		t.Fatalf("new push consumer: %v", err)
	}
	sel := consumer.MessageSelector{}
	if expr != "" && expr != "*" {
		sel = consumer.MessageSelector{Type: consumer.TAG, Expression: expr}
	}
	err = pc.Subscribe(topic, sel, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		res := consumer.ConsumeSuccess
		for _, m := range msgs {
			if r := fn(m); r != consumer.ConsumeSuccess {
				res = r
			}
		}
		return res, nil
	})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("start push consumer: %v", err)
	}
	w := &pushConsumer{PushConsumer: pc}
	t.Cleanup(w.shutdown)
	return w
}

func newAdmin(t testing.TB, c *cluster.Cluster) admin.Admin {
	t.Helper()
	a, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{c.NamesrvAddr()})))
	if err != nil {
		t.Fatalf("new admin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// createTopic creates topic on broker i through the official admin API.
func createTopic(t testing.TB, c *cluster.Cluster, i int, topic string, queues int) {
	t.Helper()
	a := newAdmin(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.BrokerAddr(i)),
		admin.WithReadQueueNums(queues), admin.WithWriteQueueNums(queues))
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// collector records received messages by body, safe for concurrent use.
type collector struct {
	mu   sync.Mutex
	msgs map[string]*primitive.MessageExt
	dups int
}

func newCollector() *collector { return &collector{msgs: map[string]*primitive.MessageExt{}} }

func (c *collector) add(m *primitive.MessageExt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.msgs[string(m.Body)]; ok {
		c.dups++
	}
	c.msgs[string(m.Body)] = m
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

func (c *collector) get(body string) *primitive.MessageExt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs[body]
}

func withNoRetry() producer.Option { return producer.WithRetry(0) }
