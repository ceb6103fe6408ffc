package broker

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func consumerList(t *testing.T, rc *rawClient, group string) []string {
	t.Helper()
	resp := rc.call(protocol.ReqGetConsumerListByGroup, protocol.GetConsumerListByGroupRequestHeader{ConsumerGroup: group}.Encode(), nil)
	if resp.Code != protocol.RespSuccess {
		return nil
	}
	var body protocol.GetConsumerListByGroupResponseBody
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.ConsumerIDList
}

func TestHeartbeatMembershipAndNotify(t *testing.T) {
	b := startBroker(t, nil)
	a := newRawClient(t, b.Addr())
	c, cNetwork := newMemClient(t, b) // the second member's network is cut below
	a.createTopic("T", 2)
	sub := protocol.BuildSubscriptionData("T", "*")

	expect(t, a.heartbeat("client-a", "g", sub), protocol.RespSuccess, "")
	if _, ok := b.core.Topic("%RETRY%g"); !ok {
		t.Fatal("retry topic not created on the first heartbeat")
	}
	if tc, _ := b.core.Topic("%RETRY%g"); tc.ReadQueueNums != 1 || tc.Perm != 6 {
		t.Fatalf("retry topic %+v", tc)
	}
	if got := consumerList(t, a, "g"); !slices.Equal(got, []string{"client-a"}) {
		t.Fatalf("consumer list %v", got)
	}
	// A second member joins: both are told.
	expect(t, c.heartbeat("client-c", "g", sub), protocol.RespSuccess, "")
	testwait.For(t, testwait.Default, "notification of the first member", func() bool { return slices.Contains(a.notifications(), "g") })
	if got := consumerList(t, a, "g"); !slices.Equal(got, []string{"client-a", "client-c"}) {
		t.Fatalf("consumer list %v", got)
	}
	// A repeated heartbeat is not a change.
	n := len(a.notifications())
	expect(t, c.heartbeat("client-c", "g", sub), protocol.RespSuccess, "")
	// The second member's network is cut: the first is told again.
	cNetwork.Cut()
	testwait.For(t, testwait.Default, "notification after close", func() bool { return len(a.notifications()) > n })
	testwait.For(t, testwait.Default, "member removed", func() bool { return slices.Equal(consumerList(t, a, "g"), []string{"client-a"}) })

	// Unknown group: Java's SYSTEM_ERROR without a body.
	resp := a.call(protocol.ReqGetConsumerListByGroup, protocol.GetConsumerListByGroupRequestHeader{ConsumerGroup: "nobody"}.Encode(), nil)
	expect(t, resp, protocol.RespSystemError, "no consumer")

	// UNREGISTER_CLIENT (Java clients).
	expect(t, a.call(protocol.ReqUnregisterClient, protocol.UnregisterClientRequestHeader{ClientID: "client-a", ConsumerGroup: "g"}.Encode(), nil), protocol.RespSuccess, "")
	if got := consumerList(t, a, "g"); len(got) != 0 {
		t.Fatalf("after unregister: %v", got)
	}
	// Bad heartbeats.
	expect(t, a.call(protocol.ReqHeartBeat, nil, []byte("{")), protocol.RespSystemError, "")
	expect(t, a.heartbeat("x", "bad group!"), protocol.RespSystemError, "illegal characters")
}

func TestClientExpiry(t *testing.T) {
	clock := newFakeClock()
	b := startBroker(t, func(c *config.Config) { c.Now = clock.Now })
	a := newRawClient(t, b.Addr())
	c := newRawClient(t, b.Addr())
	expect(t, a.heartbeat("client-a", "g"), protocol.RespSuccess, "")
	clock.Advance(100 * time.Second)
	expect(t, c.heartbeat("client-c", "g"), protocol.RespSuccess, "")
	clock.Advance(30 * time.Second) // a: 130 s silent, c: 30 s
	b.ExpireClients()
	if got := b.ConsumerIDs("g"); !slices.Equal(got, []string{"client-c"}) {
		t.Fatalf("after expiry: %v", got)
	}
	testwait.For(t, testwait.Default, "the remaining member notified", func() bool { return len(c.notifications()) > 0 })
}

func TestLockBatch(t *testing.T) {
	_, rc := withClient(t)
	mqs := []protocol.MessageQueue{{Topic: "T", BrokerName: "broker-a", QueueID: 0}, {Topic: "T", BrokerName: "broker-a", QueueID: 1}}
	lockFor := func(client string, qs []protocol.MessageQueue) []protocol.MessageQueue {
		return lockOver(t, rc, "g", client, qs)
	}
	if got := lockFor("c1", mqs); len(got) != 2 {
		t.Fatalf("c1 locked %v", got)
	}
	if got := lockFor("c2", mqs); len(got) != 0 {
		t.Fatalf("c2 locked %v while c1 holds them", got)
	}
	body := protocol.LockBatchRequestBody{ConsumerGroup: "g", ClientID: "c1", MQSet: mqs[:1]}.Encode()
	expect(t, rc.call(protocol.ReqUnlockBatchMQ, nil, body), protocol.RespSuccess, "")
	if got := lockFor("c2", mqs); len(got) != 1 || got[0].QueueID != 0 {
		t.Fatalf("c2 locked %v after c1 released queue 0", got)
	}
	expect(t, rc.call(protocol.ReqLockBatchMQ, nil, []byte("nope")), protocol.RespSystemError, "")
}
