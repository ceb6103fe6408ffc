package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/client/internal/fakebroker"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// backend is a cluster the end-to-end tests run against: the in-memory
// fake (fast, with fault injection) and a real in-process Runnel cluster.
type backend struct {
	name    string
	ns      string
	fake    *fakebroker.Cluster // nil for Runnel
	runnel  *cluster.Cluster    // nil for the fake
	brokers []string            // broker addresses
}

// fastDelayLevels are the Runnel brokers' delay levels in these tests, the
// counterpart of the fake's DelayUnit: a message sent back for retry
// (level 3 and up) comes again in well under a second instead of 10 s.
const fastDelayLevels = "20ms 40ms 60ms 80ms 100ms 120ms 140ms 160ms 180ms 200ms 220ms 240ms 260ms 280ms 300ms 320ms 340ms 360ms"

// forBackends runs fn against a fake cluster and a Runnel cluster, each with
// n brokers.
func forBackends(t *testing.T, n int, fn func(t *testing.T, be *backend)) {
	t.Run("fake", func(t *testing.T) {
		var cfgs []fakebroker.Config
		for i := range n {
			cfgs = append(cfgs, fakebroker.Config{Name: fmt.Sprintf("broker-%c", 'a'+i)})
		}
		c := startFake(t, cfgs...)
		be := &backend{name: "fake", ns: c.NameServer(), fake: c}
		for _, b := range c.Brokers {
			be.brokers = append(be.brokers, b.Addr())
		}
		fn(t, be)
	})
	t.Run("runnel", func(t *testing.T) { fn(t, startRunnel(t, n, nil)) })
}

// startRunnel starts a Runnel backend of n brokers; configure, if set,
// adjusts each broker's config after the tests' defaults.
func startRunnel(t *testing.T, n int, configure func(i int, cfg *broker.Config)) *backend {
	c := startCluster(t, cluster.Brokers(n), cluster.Configure(func(i int, cfg *broker.Config) {
		cfg.MessageDelayLevel = fastDelayLevels
		if configure != nil {
			configure(i, cfg)
		}
	}))
	be := &backend{name: "runnel", ns: c.NamesrvAddr(), runnel: c}
	for i := range n {
		be.brokers = append(be.brokers, c.BrokerAddr(i))
	}
	return be
}

// createTopic creates topic with n queues on every broker
// (UPDATE_AND_CREATE_TOPIC, as the admin tools send it).
func (be *backend) createTopic(t testing.TB, topic string, n int) {
	t.Helper()
	if be.fake != nil {
		be.fake.CreateTopic(topic, n)
		return
	}
	rc := remoting.NewClient(remoting.ClientConfig{Logger: discardLogger()})
	defer rc.Close()
	for _, addr := range be.brokers {
		h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: protocol.DefaultTopicKey, ReadQueueNums: int32(n),
			WriteQueueNums: int32(n), Perm: 6, TopicFilterType: "SINGLE_TAG"}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := rc.Invoke(ctx, addr, protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil))
		cancel()
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("create topic %s on %s: %v %v", topic, addr, err, resp)
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
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Shutdown(context.Background()) })
	return pc
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
	if be.fake != nil {
		return be.fake.Brokers[i].Offset(group, topic, qid)
	}
	if off, ok := be.runnel.Broker(i).ConsumerOffset(group, topic, int32(qid)); ok {
		return off
	}
	return -1
}

// pulls returns how many PULL_MESSAGE requests the brokers have received.
func (be *backend) pulls() int64 {
	var n int64
	if be.fake != nil {
		for _, b := range be.fake.Brokers {
			n += b.Stats.Pulls.Load()
		}
		return n
	}
	for i := range be.brokers {
		n += be.runnel.Broker(i).PullRequests()
	}
	return n
}

// waitMaxOffsets waits until every queue of topic shows want messages, so
// that a consumer started next finds all of them in its first pull.
func (be *backend) waitMaxOffsets(t testing.TB, topic string, want int64) {
	t.Helper()
	pc := startPullConsumer(t, be, "DEFAULT_CONSUMER")
	ctx := context.Background()
	mqs, err := pc.MessageQueues(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
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
	pc := startPullConsumer(t, be, "DEFAULT_CONSUMER")
	ctx := context.Background()
	mqs, err := pc.MessageQueues(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[queue.MessageQueue]int64{}
	for _, mq := range mqs {
		if ends[mq], err = pc.MaxOffset(ctx, mq); err != nil {
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

// resetOffsets has the broker reset group's offsets of topic's queues on
// broker 0 (queue id -> offset). Runnel is asked as the admin tools ask
// (INVOKE_BROKER_TO_RESET_OFFSET per queue), and pushes
// RESET_CONSUMER_CLIENT_OFFSET to the group's clients itself; the fake
// pushes it on the test's behalf.
func (be *backend) resetOffsets(t testing.TB, group, topic string, offs map[int]int64) {
	t.Helper()
	if be.fake != nil {
		b := be.fake.Brokers[0]
		table := protocol.ResetOffsetBody{OffsetTable: map[protocol.MessageQueue]int64{}}
		for qid, off := range offs {
			table.OffsetTable[protocol.MessageQueue{Topic: topic, BrokerName: b.Name(), QueueID: int32(qid)}] = off
		}
		b.CallClients(group, func() *protocol.Command {
			req := protocol.NewRequest(protocol.ReqResetConsumerClientOffset,
				protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: 0, QueueID: -1, Offset: -1}.Encode(),
				table.Encode())
			req.Flag |= protocol.FlagOneway
			return req
		}, time.Second)
		return
	}
	rc := remoting.NewClient(remoting.ClientConfig{Logger: discardLogger()})
	defer rc.Close()
	for qid, off := range offs {
		h := protocol.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: 0, IsForce: true, QueueID: int32(qid), Offset: off}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := rc.Invoke(ctx, be.brokers[0], protocol.NewRequest(protocol.ReqInvokeBrokerToResetOffset, h.Encode(), nil))
		cancel()
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("reset offset of %s queue %d: %v %v", topic, qid, err, resp)
		}
	}
}
