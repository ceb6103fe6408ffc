package client

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestSurvivesBrokerRestart: a Runnel broker restarts under a running
// producer and consumer; both reconnect and nothing is lost.
func TestSurvivesBrokerRestart(t *testing.T) {
	c := startCluster(t, cluster.Brokers(2))
	be := &backend{ns: c.NamesrvAddr(), brokers: []string{c.BrokerAddr(0), c.BrokerAddr(1)}}
	p := be.producerOnNewTopic(t, "T", 2)
	_, col := startCollecting(t, be.ns, "g", "T")
	produce(t, p, "T", 0, 100)
	testwait.For(t, testwait.Default, "first 100", func() bool { return col.distinct() == 100 })
	c.RestartBroker(0)
	produce(t, p, "T", 100, 100) // retried on broker-b while broker-a comes back
	testwait.For(t, 20*time.Second, "all 200 after the restart", func() bool { return col.distinct() == 200 })
}

// TestConsumerHeartbeatsWhenTheBrokerAsks: after a clean broker restart
// the broker knows no subscription of the group and answers its pulls
// SUBSCRIPTION_NOT_EXIST ("send a heartbeat first"); the consumer
// heartbeats at once instead of at its next round, so with the default
// 30 s heartbeat interval consumption resumes well within it.
func TestConsumerHeartbeatsWhenTheBrokerAsks(t *testing.T) {
	c, p, col := startDefaultHeartbeats(t, "HB", "g-hb")
	produce(t, p, "HB", 0, 5)
	testwait.For(t, 10*time.Second, "the first 5", func() bool { return col.distinct() == 5 })
	c.RestartBroker(0)
	produce(t, p, "HB", 5, 5)
	testwait.For(t, 10*time.Second, "the 5 sent after the restart", func() bool { return col.distinct() == 10 })
}

// BenchmarkConsumeResumesAfterBrokerRestart: with the default 30 s
// heartbeat interval, time from a clean broker restart to the first
// message sent after it being consumed (ms per restart).
func BenchmarkConsumeResumesAfterBrokerRestart(b *testing.B) {
	c, p, col := startDefaultHeartbeats(b, "HBB", "g-hbb")
	produce(b, p, "HBB", 0, 1)
	testwait.For(b, 10*time.Second, "the first message", func() bool { return col.distinct() == 1 })
	var total time.Duration
	for i := range b.N {
		start := time.Now()
		c.RestartBroker(0)
		produce(b, p, "HBB", i+1, 1)
		testwait.For(b, 20*time.Second, "the message after the restart", func() bool { return col.distinct() == i+2 })
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/recovery")
}

// startDefaultHeartbeats starts a one-broker cluster with topic (one
// queue), a producer, and a consumer of group that heartbeats at the
// default 30 s interval.
func startDefaultHeartbeats(t testing.TB, topic, group string) (*cluster.Cluster, *Producer, *collector) {
	t.Helper()
	c := startCluster(t)
	be := &backend{ns: c.NamesrvAddr(), brokers: []string{c.BrokerAddr(0)}}
	p := be.producerOnNewTopic(t, topic, 1)
	col := newCollector()
	cons := newConsumer(t, be.ns, group, func(cfg *PushConsumerConfig) {
		cfg.Concurrently = col.listener()
		cfg.Client.HeartbeatInterval = 30 * time.Second
	})
	startConsumer(t, cons, topic, "*")
	return c, p, col
}
