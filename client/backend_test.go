package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/internal/fakebroker"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// backend is a cluster the end-to-end tests run against: the in-memory
// fake (fast, with fault injection) and a real in-process Runnel cluster.
type backend struct {
	name    string
	ns      string
	fake    *fakebroker.Cluster // nil for Runnel
	brokers []string            // broker addresses
}

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
	t.Run("runnel", func(t *testing.T) {
		c := startCluster(t, cluster.Brokers(n))
		be := &backend{name: "runnel", ns: c.NamesrvAddr()}
		for i := range n {
			be.brokers = append(be.brokers, c.BrokerAddr(i))
		}
		fn(t, be)
	})
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
	waitFor(t, 5*time.Second, "route of "+topic, func() bool {
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
