package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/teststart"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// backend is the Runnel cluster the end-to-end tests run against, with a
// tap on each broker: the real broker answers, and the tap records what it
// was asked and injects the faults a test wants (package brokertap).
type backend struct {
	ns      string
	runnel  *cluster.Cluster
	taps    []*brokertap.Tap // taps[i] sits in broker i's server
	brokers []string         // broker addresses
}

// fastDelayLevels are the brokers' delay levels in these tests: a message
// sent back for retry (level 3 and up) comes again in well under a second
// instead of 10 s.
const fastDelayLevels = "20ms 40ms 60ms 80ms 100ms 120ms 140ms 160ms 180ms 200ms 220ms 240ms 260ms 280ms 300ms 320ms 340ms 360ms"

// forBackends runs fn, as subtest "runnel", against a Runnel cluster of n
// brokers (startRunnel).
func forBackends(t *testing.T, n int, fn func(t *testing.T, be *backend)) {
	t.Run("runnel", func(t *testing.T) { fn(t, startRunnel(t, n, nil)) })
}

// startRunnel starts a Runnel backend of n brokers ("broker-a", ...), each
// with a tap; configure, if set, adjusts each broker's config after the
// tests' defaults.
func startRunnel(t testing.TB, n int, configure func(i int, cfg *config.Config)) *backend {
	t.Helper()
	be := &backend{}
	for range n {
		be.taps = append(be.taps, brokertap.New())
	}
	c := startCluster(t, cluster.Brokers(n), cluster.Configure(func(i int, cfg *config.Config) {
		cfg.MessageDelayLevel = fastDelayLevels
		cfg.Interceptors = append(cfg.Interceptors, be.taps[i].Interceptor())
		if configure != nil {
			configure(i, cfg)
		}
	}))
	be.ns, be.runnel = c.NamesrvAddr(), c
	for i := range n {
		be.brokers = append(be.brokers, c.BrokerAddr(i))
	}
	return be
}

// broker returns broker i.
func (be *backend) broker(i int) *broker.Broker { return be.runnel.Broker(i) }

// brokerIndex returns the index of the broker named name.
func (be *backend) brokerIndex(t testing.TB, name string) int {
	t.Helper()
	for i := range be.brokers {
		if be.runnel.BrokerName(i) == name {
			return i
		}
	}
	t.Fatalf("no broker %q", name)
	return -1
}

// stored returns the messages broker i's store holds in topic/qid, as
// stored (compressed bodies left compressed); none for an unknown queue.
func (be *backend) stored(t testing.TB, i int, topic string, qid int32) []*protocol.MessageExt {
	t.Helper()
	res, err := be.broker(i).Store().Get(topic, qid, 0, 1<<16, 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := message.DecodeMessagesRaw(res.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// createTopic creates topic with n queues on every broker
// (UPDATE_AND_CREATE_TOPIC, as the admin tools send it).
// producerOnNewTopic creates topic with n queues on every broker and
// starts a producer: the first two steps of most tests.
func (be *backend) producerOnNewTopic(t testing.TB, topic string, n int) *Producer {
	t.Helper()
	be.createTopic(t, topic, n)
	return startProducer(t, be.ns, nil)
}

func (be *backend) createTopic(t testing.TB, topic string, n int) {
	t.Helper()
	for i, addr := range be.brokers {
		h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: protocol.DefaultTopicKey, ReadQueueNums: int32(n),
			WriteQueueNums: int32(n), Perm: 6, TopicFilterType: "SINGLE_TAG"}
		if resp := be.invoke(t, i, protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil)); resp.Code != protocol.RespSuccess {
			t.Fatalf("create topic %s on %s: %v", topic, addr, resp)
		}
	}
	// The name server learns the topic from the broker's registration.
	pc := startPullConsumer(t, be, "DEFAULT_CONSUMER")
	testwait.For(t, testwait.Default, "route of "+topic, func() bool {
		mqs, err := pc.MessageQueues(context.Background(), topic)
		return err == nil && len(mqs) == n*len(be.brokers)
	})
}

func startPullConsumer(t testing.TB, be *backend, group string) *PullConsumer {
	t.Helper()
	cfg := DefaultPullConsumerConfig()
	cfg.Client = testClient(be.ns)
	cfg.Group = group
	pc, err := NewPullConsumer(cfg)
	return teststart.Started(t, pc, err)
}

// committed returns group's committed offset of every queue of topic
// (-1 where there is none), read with QUERY_CONSUMER_OFFSET.
func (be *backend) committed(t testing.TB, group, topic string) []int64 {
	t.Helper()
	pc := startPullConsumer(t, be, group)
	ctx := context.Background()
	mqs, err := pc.MessageQueues(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, mq := range mqs {
		off, err := pc.CommittedOffset(ctx, mq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, off)
	}
	_ = pc.Shutdown(ctx)
	return out
}

// brokerOffset reads group's committed offset of topic/qid straight from
// broker i's table (-1 where there is none), without a request that could
// itself change what the consumers do.
func (be *backend) brokerOffset(i int, group, topic string, qid int) int64 {
	if off, ok := be.runnel.Broker(i).ConsumerOffset(group, topic, int32(qid)); ok {
		return off
	}
	return -1
}

// pulls returns how many PULL_MESSAGE requests the brokers have received.
func (be *backend) pulls() int64 {
	var n int64
	for i := range be.brokers {
		n += be.runnel.Broker(i).PullRequests()
	}
	return n
}

// queues returns a pull consumer of be and every queue of topic.
func (be *backend) queues(t testing.TB, topic string) (*PullConsumer, []queue.MessageQueue) {
	t.Helper()
	pc := startPullConsumer(t, be, "DEFAULT_CONSUMER")
	mqs, err := pc.MessageQueues(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	return pc, mqs
}

// waitMaxOffsets waits until every queue of topic shows want messages, so
// that a consumer started next finds all of them in its first pull.
func (be *backend) waitMaxOffsets(t testing.TB, topic string, want int64) {
	t.Helper()
	pc, mqs := be.queues(t, topic)
	ctx := context.Background()
	testwait.For(t, testwait.Default, "messages visible in every queue of "+topic, func() bool {
		for _, mq := range mqs {
			if n, err := pc.MaxOffset(ctx, mq); err != nil || n != want {
				return false
			}
		}
		return true
	})
}

// waitAtEnd waits until each consumer's offset of every queue of topic is
// at the queue's end. A consumer's offset of a queue passes a message only
// once its listener has returned for it, and it pulls a queue in order, so
// from then on what it has delivered of the messages sent so far is all it
// will deliver: the check a test would otherwise make after a sleep.
func (be *backend) waitAtEnd(t testing.TB, topic string, consumers ...*PushConsumer) {
	t.Helper()
	pc, mqs := be.queues(t, topic)
	ends := map[queue.MessageQueue]int64{}
	for _, mq := range mqs {
		var err error
		if ends[mq], err = pc.MaxOffset(context.Background(), mq); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range consumers {
		testwait.Until(t, testwait.Default, c.cfg.Group+" at the end of "+topic, func() error {
			_, st, ok := c.state()
			if !ok {
				return ErrClosed
			}
			got := st.Snapshot(topic)
			for mq, end := range ends {
				if got[mq] != end {
					return fmt.Errorf("offsets %v, queue ends %v", got, ends)
				}
			}
			return nil
		})
	}
}

func sum(offs []int64) int64 {
	var s int64
	for _, o := range offs {
		s += max(o, 0)
	}
	return s
}

// startCluster starts a Runnel cluster. It takes the test's temporary
// directory first so that its removal is registered before, and so runs
// after, the cluster's own cleanup (cluster.Start registers the brokers'
// shutdown before their store directories).
func startCluster(t testing.TB, opts ...cluster.Option) *cluster.Cluster {
	t.Helper()
	t.TempDir()
	return cluster.Start(t, opts...)
}

// resetOffsets has broker 0 reset group's offsets of topic's queues
// (queue id -> offset), asked as the admin tools ask
// (INVOKE_BROKER_TO_RESET_OFFSET per queue); the broker pushes
// RESET_CONSUMER_CLIENT_OFFSET to the group's clients itself.
func (be *backend) resetOffsets(t testing.TB, group, topic string, offs map[int]int64) {
	t.Helper()
	for qid, off := range offs {
		h := protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: 0, IsForce: true, QueueID: int32(qid), Offset: off}
		if resp := be.invoke(t, 0, protocol.NewRequest(protocol.ReqInvokeBrokerToResetOffset, h.Encode(), nil)); resp.Code != protocol.RespSuccess {
			t.Fatalf("reset offset of %s queue %d: %v", topic, qid, resp)
		}
	}
}

// invoke sends req to broker i, as an admin tool would, and returns the
// answer; a transport error fails the test.
func (be *backend) invoke(t testing.TB, i int, req *protocol.Command) *protocol.Command {
	t.Helper()
	rc := remoting.NewClient(remoting.ClientConfig{Logger: discardLogger()})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := rc.Invoke(ctx, be.brokers[i], req)
	if err != nil {
		t.Fatalf("%d to broker %d: %v", req.Code, i, err)
	}
	return resp
}
