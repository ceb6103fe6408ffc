package client

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestIdleConsumerLongPolls: a push consumer with nothing to consume parks
// one pull per queue at the broker (the suspend flag) instead of polling,
// so over an idle stretch shorter than the suspend time the broker sees at
// most one pull per assigned queue (those that were not parked yet).
func TestIdleConsumerLongPolls(t *testing.T) {
	c := startCluster(t)
	be := &backend{ns: c.NamesrvAddr(), runnel: c, brokers: []string{c.BrokerAddr(0)}}
	be.createTopic(t, "T", 2)
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.BrokerSuspendMax = 20 * time.Second // well past the idle stretch below
		cfg.Concurrently = newCollector().listener()
	})
	startConsumer(t, cons, "T", "*")
	testwait.For(t, testwait.Default, "2 queues and the retry queue assigned", func() bool { return len(cons.Assigned()) == 3 })
	before := be.pulls()
	time.Sleep(2 * time.Second) // the idle stretch under observation
	if n, queues := be.pulls()-before, int64(len(cons.Assigned())); n > queues {
		t.Fatalf("%d pulls in 2 s of idleness for %d queues: the consumer polls instead of long-polling", n, queues)
	}
}

// TestCommitOffsetRidesOnPull: with periodic persistence out of the way,
// the offset consumed so far still reaches the broker, carried by the next
// pull (commit-offset flag), with no UPDATE_CONSUMER_OFFSET at all.
func TestCommitOffsetRidesOnPull(t *testing.T) {
	forBackends(t, 1, testCommitOffsetRidesOnPull)
}

func testCommitOffsetRidesOnPull(t *testing.T, be *backend) {
	be.createTopic(t, "T", 1)
	p := startProducer(t, be.ns, nil)
	col := newCollector()
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Client.PersistInterval = time.Hour
		cfg.BrokerSuspendMax = 20 * time.Second // only the arrival of B ends the parked pull
		cfg.Concurrently = col.listener()
	})
	startConsumer(t, cons, "T", "*")
	produce(t, p, "T", 0, 10) // batch A
	testwait.For(t, testwait.Default, "batch A consumed", func() bool { return col.distinct() == 10 })
	// The pull parked while A was consumed carries no commit; the one sent
	// after B is dispatched carries at least the end of A.
	produce(t, p, "T", 10, 5) // batch B
	testwait.For(t, testwait.Default, "end of A committed at the broker", func() bool { return be.brokerOffset(0, "g", "T", 0) >= 10 })
	// With an hour's persist interval and no queue dropped, a pull is the
	// only way there.
	updates := be.taps[0].Count(func(req *protocol.Command) bool {
		return req.Code == protocol.ReqUpdateConsumerOffset && req.Ext("consumerGroup") == "g"
	})
	if updates != 0 {
		t.Fatalf("%d UPDATE_CONSUMER_OFFSET requests; the commit should have ridden on a pull", updates)
	}
}
