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
	be := &backend{name: "runnel", ns: c.NamesrvAddr(), brokers: []string{c.BrokerAddr(0), c.BrokerAddr(1)}}
	be.createTopic(t, "T", 2)
	p := startProducer(t, be.ns, nil)
	col := newCollector()
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) { cfg.Concurrently = col.listener() })
	startConsumer(t, cons, "T", "*")
	produce(t, p, "T", 0, 100)
	testwait.For(t, testwait.Default, "first 100", func() bool { return col.distinct() == 100 })
	c.RestartBroker(0)
	produce(t, p, "T", 100, 100) // retried on broker-b while broker-a comes back
	testwait.For(t, 20*time.Second, "all 200 after the restart", func() bool { return col.distinct() == 200 })
}
