package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/internal/teststart"
)

// Helpers for tests of Runnel's own client (package client) against a
// Runnel cluster; prefixed rc to keep clear of the official-client helpers.

func rcClientConfig(c *cluster.Cluster) client.ClientConfig {
	cfg := client.DefaultClientConfig()
	cfg.NameServerAddrs = []string{c.NamesrvAddr()}
	cfg.InstanceName = official.Instance("rc")
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
	return rcStartProducer(t, cfg)
}

// rcStartProducer starts a producer of cfg and shuts it down at cleanup.
func rcStartProducer(t testing.TB, cfg client.ProducerConfig) *client.Producer {
	t.Helper()
	p, err := client.NewProducer(cfg)
	return teststart.Started(t, p, err)
}

// rcConsumer starts our push consumer of group from the first offset, fn
// called with every message.
func rcConsumer(t testing.TB, c *cluster.Cluster, group, topic, expr string, fn func(*client.MessageExt)) *client.PushConsumer {
	t.Helper()
	return rcConsumerWith(t, c, group, topic, expr, func(cfg *client.PushConsumerConfig) {
		cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
			for _, m := range msgs {
				fn(m)
			}
			return client.ConsumeSuccess
		}
	})
}

// rcConsumerWith starts our push consumer of group from the first offset,
// its config changed by mod first (which sets how it consumes).
func rcConsumerWith(t testing.TB, c *cluster.Cluster, group, topic, expr string, mod func(*client.PushConsumerConfig)) *client.PushConsumer {
	t.Helper()
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = rcClientConfig(c)
	cfg.Group = group
	cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	mod(&cfg)
	return rcStartConsumer(t, cfg, topic, expr)
}

// rcStartConsumer starts a push consumer of cfg subscribed to topic with
// expr, and shuts it down at cleanup.
func rcStartConsumer(t testing.TB, cfg client.PushConsumerConfig, topic, expr string) *client.PushConsumer {
	t.Helper()
	pc, err := client.NewPushConsumer(cfg)
	if err == nil {
		err = pc.Subscribe(topic, expr)
	}
	return teststart.Started(t, pc, err)
}

// rcCollector records our client's deliveries.
type rcCollector = byBody[*client.MessageExt]

func newRCCollector() *rcCollector {
	return &rcCollector{body: func(m *client.MessageExt) []byte { return m.Body }, msgs: map[string]*client.MessageExt{}}
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
