package client

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/queue"
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
	p := be.producerOnNewTopic(t, "T", 1)
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

// TestToExtAllocations: a pull's messages become the listener's in two
// allocations whatever their number (the array of MessageExt and the
// process queue's list), and a retry message still shows its own topic.
func TestToExtAllocations(t *testing.T) {
	msgs := make([]*protocol.MessageExt, 32)
	for i := range msgs {
		msgs[i] = &protocol.MessageExt{}
		msgs[i].Topic, msgs[i].QueueOffset = "T", int64(i)
	}
	retry := &protocol.MessageExt{}
	retry.Topic = "%RETRY%g"
	retry.Properties = map[string]string{protocol.PropertyRetryTopic: "T"}
	msgs[5] = retry
	mq := queue.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}
	var out []pqMsg
	if n := testing.AllocsPerRun(50, func() { out = toExt(mq, msgs) }); n > 2 {
		t.Errorf("%v allocations for %d messages, want 2", n, len(msgs))
	}
	for i, m := range out {
		if m.m.Topic != "T" || m.m.Queue != mq || (i != 5 && m.m.QueueOffset != int64(i)) {
			t.Fatalf("message %d: %+v", i, m.m)
		}
	}
}
