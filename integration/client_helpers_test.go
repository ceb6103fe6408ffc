package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/integration/cluster"
)

// Helpers for tests of Runnel's own client (package client) against a
// Runnel cluster; prefixed rc to keep clear of the official-client helpers.

func rcClientConfig(c *cluster.Cluster) client.ClientConfig {
	cfg := client.DefaultClientConfig()
	cfg.NameServerAddrs = []string{c.NamesrvAddr()}
	cfg.InstanceName = instance("rc")
	cfg.ClientIP = "127.0.0.1"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RebalanceInterval = time.Second
	cfg.PersistInterval = 200 * time.Millisecond
	cfg.RouteRefreshInterval = time.Second
	return cfg
}

func rcProducer(t testing.TB, c *cluster.Cluster) *client.Producer {
	t.Helper()
	return rcProducerWith(t, c, nil)
}

// rcProducerWith is rcProducer with its config changed by mod first.
func rcProducerWith(t testing.TB, c *cluster.Cluster, mod func(*client.ProducerConfig)) *client.Producer {
	t.Helper()
	cfg := client.DefaultProducerConfig()
	cfg.Client = rcClientConfig(c)
	cfg.Group = "rc-pg"
	if mod != nil {
		mod(&cfg)
	}
	p, err := client.NewProducer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

func rcConsumer(t testing.TB, c *cluster.Cluster, group, topic, expr string, fn func(*client.MessageExt)) *client.PushConsumer {
	t.Helper()
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = rcClientConfig(c)
	cfg.Group = group
	cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			fn(m)
		}
		return client.ConsumeSuccess
	}
	pc, err := client.NewPushConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, expr); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Shutdown(context.Background()) })
	return pc
}

// rcCollector records our client's deliveries by body.
type rcCollector struct {
	mu   sync.Mutex
	msgs map[string]*client.MessageExt
	n    int
}

func newRCCollector() *rcCollector { return &rcCollector{msgs: map[string]*client.MessageExt{}} }

func (c *rcCollector) add(m *client.MessageExt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs[string(m.Body)] = m
	c.n++
}

func (c *rcCollector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

func (c *rcCollector) get(body string) *client.MessageExt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs[body]
}

func body(i int) string { return fmt.Sprintf("m-%05d", i) }

// rcCount returns how many queues of topic c holds.
func rcCount(c *client.PushConsumer, topic string) int {
	n := 0
	for _, mq := range c.Assigned() {
		if mq.Topic == topic {
			n++
		}
	}
	return n
}

// rcCluster starts a cluster. It takes the test's temporary directory first
// so that its removal is registered before, and so runs after, the
// cluster's own cleanup: cluster.Start registers the brokers' shutdown
// before their store directories, and a broker whose directory is already
// gone fails its final flush.
func rcCluster(t testing.TB, opts ...cluster.Option) *cluster.Cluster {
	t.Helper()
	t.TempDir()
	return cluster.Start(t, opts...)
}
