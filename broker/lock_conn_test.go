package broker

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// lockOver sends LOCK_BATCH_MQ for client over rc and returns the queues
// the broker reports locked.
func lockOver(t *testing.T, rc *rawClient, group, client string, mqs []protocol.MessageQueue) []protocol.MessageQueue {
	t.Helper()
	body := protocol.LockBatchRequestBody{ConsumerGroup: group, ClientID: client, MQSet: mqs}.Encode()
	return callDecode(rc, protocol.ReqLockBatchMQ, nil, body, protocol.DecodeLockBatchResponseBody).LockOKMQSet
}

// TestLockOutlivesConnection: a queue lock belongs to the client id, not
// to the connection it came over (Java's RebalanceLockManager knows no
// channels): when c1's connection is cut, its locks stay until they expire,
// so another client cannot take a queue c1 may still be consuming; c1
// itself renews them over a new connection; once LockMaxLiveTime passes
// without renewal, c2 gets them.
func TestLockOutlivesConnection(t *testing.T) {
	clock := newFakeClock()
	b := startBroker(t, func(c *config.Config) { c.Now = clock.Now })
	mqs := []protocol.MessageQueue{{Topic: "T", BrokerName: "broker-a", QueueID: 0}, {Topic: "T", BrokerName: "broker-a", QueueID: 1}}

	// c1 comes over an in-memory connection, whose network the test cuts.
	a, network := newMemClient(t, b)
	expect(t, a.heartbeat("c1", "g"), protocol.RespSuccess, "")
	if got := lockOver(t, a, "g", "c1", mqs); len(got) != 2 {
		t.Fatalf("c1 locked %v", got)
	}
	network.Cut()
	// The broker has handled the close once c1 has left the group.
	testwait.For(t, testwait.Default, "c1 dropped with its connection", func() bool { return len(b.ConsumerIDs("g")) == 0 })

	other := newRawClient(t, b.Addr())
	if got := lockOver(t, other, "g", "c2", mqs); len(got) != 0 {
		t.Fatalf("c2 locked %v after c1's connection closed; c1's locks must live on", got)
	}
	// Just short of expiry c2 is still refused.
	clock.Advance(b.cfg.LockMaxLiveTime - time.Millisecond)
	if got := lockOver(t, other, "g", "c2", mqs); len(got) != 0 {
		t.Fatalf("c2 locked %v before c1's locks expired", got)
	}
	// c1, back over a new connection, renews its locks from now.
	back := newRawClient(t, b.Addr())
	if got := lockOver(t, back, "g", "c1", mqs[:1]); len(got) != 1 {
		t.Fatalf("c1 renewing over a new connection got %v", got)
	}
	clock.Advance(2 * time.Millisecond)
	got := lockOver(t, other, "g", "c2", mqs)
	if len(got) != 1 || got[0].QueueID != 1 {
		t.Fatalf("after queue 1's lock expired c2 locked %v, want queue 1 only (c1 renewed queue 0)", got)
	}
	clock.Advance(b.cfg.LockMaxLiveTime + time.Millisecond)
	if got := lockOver(t, other, "g", "c2", mqs); len(got) != 2 {
		t.Fatalf("after every lock of c1 expired c2 locked %v", got)
	}
}
