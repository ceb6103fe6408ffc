package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/message"
)

// The official RocketMQ 5 Go SDK (github.com/apache/rocketmq-clients/golang/v5)
// against the gRPC door. Its clients start TLS by default without
// verifying the server (rmq5.EnableSsl), which the door's port serves
// beside plaintext; the tests keep that default unless they say
// otherwise. Each client's Start waits for the server's Settings, polling
// once a second, so a client costs about a second to start.

func init() {
	// The SDK logs to ~/logs/rocketmq unless told otherwise, at info.
	_ = os.Setenv("rocketmq.client.logRoot", filepath.Join(os.TempDir(), "runnel-v5-sdk-logs"))
	_ = os.Setenv("rocketmq.client.logLevel", "error")
	rmq5.ResetLogger()
}

// startV5 starts a cluster whose brokers serve the gRPC door.
func startV5(t testing.TB, opts ...cluster.Option) *cluster.Cluster {
	t.Helper()
	return cluster.Start(t, append([]cluster.Option{cluster.GRPC()}, opts...)...)
}

// v5Config is an SDK client's config for broker i of c.
func v5Config(c *cluster.Cluster, i int, group string, cred *credentials.SessionCredentials) *rmq5.Config {
	return &rmq5.Config{Endpoint: c.GRPCAddr(i), ConsumerGroup: group, Credentials: cred}
}

// newV5Producer starts an SDK producer on broker 0 of c.
func newV5Producer(t testing.TB, c *cluster.Cluster, topics []string, opts ...rmq5.ProducerOption) rmq5.Producer {
	t.Helper()
	return newV5ProducerWith(t, v5Config(c, 0, "", nil), topics, opts...)
}

func newV5ProducerWith(t testing.TB, cfg *rmq5.Config, topics []string, opts ...rmq5.ProducerOption) rmq5.Producer {
	t.Helper()
	p, err := rmq5.NewProducer(cfg, append([]rmq5.ProducerOption{rmq5.WithTopics(topics...)}, opts...)...)
	return startedV5(t, "producer", p, err)
}

// startedV5 starts an SDK client that New gave with err, and stops it
// when the test ends.
func startedV5[C interface {
	Start() error
	GracefulStop() error
}](t testing.TB, what string, c C, err error) C {
	t.Helper()
	if err != nil {
		t.Fatalf("new v5 %s: %v", what, err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("start v5 %s: %v", what, err)
	}
	t.Cleanup(func() { _ = c.GracefulStop() })
	return c
}

// newV5SimpleConsumer starts an SDK simple consumer of group on broker 0
// of c, subscribed to subs, waiting up to await for a receive.
func newV5SimpleConsumer(t testing.TB, c *cluster.Cluster, group string, subs map[string]*rmq5.FilterExpression, await time.Duration) rmq5.SimpleConsumer {
	t.Helper()
	sc, err := rmq5.NewSimpleConsumer(v5Config(c, 0, group, nil),
		rmq5.WithSimpleAwaitDuration(await), rmq5.WithSimpleSubscriptionExpressions(subs))
	return startedV5(t, "simple consumer", sc, err)
}

// v5Send sends one message and fails the test if it is not stored.
func v5Send(t testing.TB, p rmq5.Producer, m *rmq5.Message) *rmq5.SendReceipt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := p.Send(ctx, m)
	if err != nil {
		t.Fatalf("v5 send to %s: %v", m.Topic, err)
	}
	if len(rs) != 1 || rs[0].MessageID == "" {
		t.Fatalf("v5 send receipts %+v", rs)
	}
	return rs[0]
}

// readTopic returns every message stored in topic's queues on broker i, in
// queue order.
func readTopic(t testing.TB, c *cluster.Cluster, i int, topic string) []*message.MessageExt {
	t.Helper()
	st := c.Broker(i).Store()
	tc, ok := c.Broker(i).Core().Topic(topic)
	if !ok {
		t.Fatalf("broker %d has no topic %s", i, topic)
	}
	var out []*message.MessageExt
	for q := range int32(max(tc.ReadQueueNums, tc.WriteQueueNums)) {
		for off := st.MinOffset(topic, q); off < st.MaxOffset(topic, q); {
			res, err := st.Get(topic, q, off, 32, 1<<20, nil)
			if err != nil {
				t.Fatalf("read %s/%d@%d: %v", topic, q, off, err)
			}
			b := res.Messages
			for len(b) > 0 {
				m, n, err := message.DecodeStoredMessage(b, true)
				if err != nil {
					t.Fatalf("decode %s/%d: %v", topic, q, err)
				}
				out = append(out, m)
				b = b[n:]
			}
			if res.NextBeginOffset <= off {
				break
			}
			off = res.NextBeginOffset
		}
	}
	return out
}
