package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/official"
)

func TestMain(m *testing.M) {
	// The official client logs every rebalance and reconnect at info.
	rlog.SetLogLevel("error")
	// Both official clients leave goroutines of their own when they stop
	// (official.Leftovers, official.V5Leftovers); the check holds our
	// brokers, name servers and client to leaving none.
	leakcheck.VerifyTestMain(m, append(official.Leftovers, official.V5Leftovers...)...)
}

func newProducer(t testing.TB, c *cluster.Cluster, opts ...producer.Option) rocketmq.Producer {
	t.Helper()
	return official.Producer(t, c.NamesrvAddr(), append([]producer.Option{
		producer.WithGroupName("pg-" + t.Name()),
		producer.WithRetry(2),
	}, opts...)...)
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
	return startListener(t, c, group, topic, expr, accept(fn), opts...)
}

// startListener starts a push consumer whose listener decides each
// message's result; a batch fails if any of its messages does. expr is a
// tag expression ("" or "*" for all).
func startListener(t testing.TB, c *cluster.Cluster, group, topic, expr string,
	fn func(*primitive.MessageExt) consumer.ConsumeResult, opts ...consumer.Option) *pushConsumer {
	t.Helper()
	sel := consumer.MessageSelector{}
	if expr != "" && expr != "*" {
		sel = consumer.MessageSelector{Type: consumer.TAG, Expression: expr}
	}
	return startSelected(t, c, group, topic, sel, fn, opts...)
}

// startSelected is startListener with any selector (SQL92, say).
func startSelected(t testing.TB, c *cluster.Cluster, group, topic string, sel consumer.MessageSelector,
	fn func(*primitive.MessageExt) consumer.ConsumeResult, opts ...consumer.Option) *pushConsumer {
	t.Helper()
	pc := subscribed(t, c.NamesrvAddr(), group, topic, sel, fn, opts...)
	if err := pc.Start(); err != nil {
		t.Fatalf("start push consumer: %v", err)
	}
	w := &pushConsumer{PushConsumer: pc}
	t.Cleanup(w.shutdown)
	return w
}

// subscribed returns an official push consumer of group, reading from its
// first offset through the name server namesrv, subscribed to topic and
// not started; opts come after those. fn decides each message's result.
func subscribed(t testing.TB, namesrv, group, topic string, sel consumer.MessageSelector,
	fn func(*primitive.MessageExt) consumer.ConsumeResult, opts ...consumer.Option) rocketmq.PushConsumer {
	t.Helper()
	all := append([]consumer.Option{
		consumer.WithNameServer([]string{namesrv}),
		consumer.WithInstance(official.Instance("c")),
		consumer.WithGroupName(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}, opts...)
	pc, err := rocketmq.NewPushConsumer(all...)
	if err != nil {
		t.Fatalf("new push consumer: %v", err)
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
	return pc
}

// accept is a listener that hands every message to fn and succeeds.
func accept(fn func(*primitive.MessageExt)) func(*primitive.MessageExt) consumer.ConsumeResult {
	return func(m *primitive.MessageExt) consumer.ConsumeResult {
		fn(m)
		return consumer.ConsumeSuccess
	}
}

// startRefused starts an official push consumer of group that the broker
// refuses (its account may not subscribe with it): its start may fail at
// its first heartbeat or only log. It returns what the consumer receives,
// which should be nothing.
func startRefused(t testing.TB, c *cluster.Cluster, group, topic string, opts ...consumer.Option) *collector {
	t.Helper()
	got := newCollector()
	pc := subscribed(t, c.NamesrvAddr(), group, topic, consumer.MessageSelector{}, accept(got.add), opts...)
	_ = pc.Start()
	t.Cleanup(func() { _ = pc.Shutdown() })
	return got
}

// newAdmin returns an official admin client of c's name server; opts come
// after that.
func newAdmin(t testing.TB, c *cluster.Cluster, opts ...admin.AdminOption) admin.Admin {
	t.Helper()
	return official.Admin(t, c.NamesrvAddr(), opts...)
}

// createTopic creates topic on broker i through the official admin API,
// an admin of opts.
func createTopic(t testing.TB, c *cluster.Cluster, i int, topic string, queues int, opts ...admin.AdminOption) {
	t.Helper()
	a := newAdmin(t, c, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(c.BrokerAddr(i)),
		admin.WithReadQueueNums(queues), admin.WithWriteQueueNums(queues))
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// byBody records received messages by body, safe for concurrent use; dups
// counts the deliveries of a body already received.
type byBody[M any] struct {
	body func(M) []byte
	mu   sync.Mutex
	msgs map[string]M
	dups int
}

// collector records the official client's deliveries.
type collector = byBody[*primitive.MessageExt]

func newCollector() *collector {
	return &collector{body: func(m *primitive.MessageExt) []byte { return m.Body }, msgs: map[string]*primitive.MessageExt{}}
}

func (c *byBody[M]) add(m M) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := string(c.body(m))
	if _, ok := c.msgs[b]; ok {
		c.dups++
	}
	c.msgs[b] = m
}

func (c *byBody[M]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// get returns the message received with body (the zero M if none was).
func (c *byBody[M]) get(body string) M {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs[body]
}

func withNoRetry() producer.Option { return producer.WithRetry(0) }

// checkBrokerErr asserts err is the official client's rendering of a broker
// response with code and a remark containing remark.
func checkBrokerErr(t *testing.T, what string, err error, code int16, remark string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: send succeeded, want CODE %d", what, code)
		return
	}
	want := fmt.Sprintf("CODE: %d, DESC: ", code)
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), remark) {
		t.Errorf("%s: err %q, want %q with remark %q", what, err, want, remark)
	}
}
