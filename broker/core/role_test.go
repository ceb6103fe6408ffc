package core

import (
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// switchBackend is a replica's backend as the core sees it: a store that
// takes writes only while leader is set (else ErrNotMaster, as the raft
// node's adapter answers).
type switchBackend struct {
	LocalBackend
	leader atomic.Bool
}

func (b *switchBackend) IsLeader() bool { return b.leader.Load() }

func (b *switchBackend) Put(msgs []*message.MessageExt) ([]store.PutResult, error) {
	if !b.leader.Load() {
		return nil, ErrNotMaster
	}
	return b.LocalBackend.Put(msgs)
}

func (b *switchBackend) Apply(op *store.Op) (*store.ApplyResult, error) {
	if !b.leader.Load() {
		return nil, ErrNotMaster
	}
	return b.LocalBackend.Apply(op)
}

// openRoleCore opens a started core over a switchBackend that leads (and
// is promoted) when leader is set.
func openRoleCore(t *testing.T, leader bool, adjust func(*Config)) (*testCore, *switchBackend) {
	t.Helper()
	base := openCore(t, nil) // for its config; its own store is separate
	cfg := base.cfg
	if adjust != nil {
		adjust(&cfg)
	}
	be := &switchBackend{}
	be.leader.Store(true) // the system topics, as a leader wrote them
	var hook atomic.Pointer[Core]
	sopts := store.DefaultOptions("/role")
	sopts.FS, sopts.Now, sopts.FlushInterval, sopts.RetentionInterval = vfs.NewMem(), base.clock.Now, -1, -1
	sopts.OnArrival = func(topic string, q int32, max int64) {
		if c := hook.Load(); c != nil {
			c.OnArrival(topic, q, max)
		}
	}
	st, err := store.Open(sopts)
	if err != nil {
		t.Fatal(err)
	}
	be.S = st
	c, err := OpenBackend(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	hook.Store(c)
	be.leader.Store(leader)
	if err := c.Start(netip.MustParseAddrPort("127.0.0.1:10912")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(false) })
	return &testCore{Core: c, clock: base.clock}, be
}

// A slave refuses sends with Java's SERVICE_NOT_AVAILABLE remark, answers
// pulls PULL_RETRY_IMMEDIATELY with the master suggested unless
// slaveReadEnable, and locks nothing.
func TestSlaveRefusesWritesAndSendsPullsToTheMaster(t *testing.T) {
	c, be := openRoleCore(t, true, nil)
	send(t, c, "T", "", 0)
	be.leader.Store(false)
	c.Demote()

	_, err := c.Send(SendRequest{Topic: "T", QueueID: 0, Messages: []SendMessage{{Body: []byte("x")}}})
	if reason, remark := reasonOf(err); reason != Unavailable || !strings.Contains(remark, "messages are put to the slave") {
		t.Fatalf("slave send: %v %q", reason, remark)
	}
	if err := c.PersistOffsets(); err != nil && !strings.Contains(err.Error(), "slave") {
		t.Fatalf("persist on a slave: %v", err)
	}
	req := PullRequest{Group: "g", Topic: "T", QueueID: 0, MaxMsgNums: 32, HasSubscription: true, Expression: "*", From: &fakeChannel{id: 1}}
	res, held, err := c.Pull(req, nil)
	if err != nil || held || res.Status != PullRetry || res.SuggestWhichBrokerID != MasterBrokerID || res.Count != 0 {
		t.Fatalf("slave pull without slaveReadEnable: %+v held %v err %v", res, held, err)
	}
	if got := c.LockBatch("g", "c1", []message.Queue{{Topic: "T", BrokerName: "broker-a"}}); len(got) != 0 {
		t.Fatalf("a slave locked %v", got)
	}

	c.cfg.SlaveReadEnable = true
	res, _, _ = c.Pull(req, nil)
	if res.Status != PullFound || res.Count != 1 || res.SuggestWhichBrokerID != MasterBrokerID {
		t.Fatalf("slave pull with slaveReadEnable: %+v", res)
	}
	req.QueueOffset = 1 // nothing there: sent to the master, not held
	req.Suspend, req.SuspendTimeout = true, 20*time.Second
	res, held, _ = c.Pull(req, func(PullResult, error) {})
	if held || res.Status != PullRetry {
		t.Fatalf("slave pull past the end: %+v held %v", res, held)
	}
}

// A master with slaveReadEnable suggests slave 1 to a consumer whose
// backlog is past ConsumeSlowlyBytes, and the master otherwise.
func TestMasterSuggestsASlaveToASlowConsumer(t *testing.T) {
	c, _ := openRoleCore(t, true, func(cfg *Config) { cfg.SlaveReadEnable, cfg.ConsumeSlowlyBytes = true, 500 })
	for range 10 {
		send(t, c, "T", "", 0)
	}
	req := PullRequest{Group: "g", Topic: "T", QueueID: 0, MaxMsgNums: 1, HasSubscription: true, Expression: "*", From: &fakeChannel{id: 1}}
	if res, _, _ := c.Pull(req, nil); res.SuggestWhichBrokerID != WhichBrokerWhenConsumeSlowly {
		t.Fatalf("far behind: suggested %d", res.SuggestWhichBrokerID)
	}
	req.QueueOffset = 9
	if res, _, _ := c.Pull(req, nil); res.SuggestWhichBrokerID != MasterBrokerID {
		t.Fatalf("caught up: suggested %d", res.SuggestWhichBrokerID)
	}
}

// A node that stops being master answers its held pulls at once; a new
// master refuses orderly locks for one LockMaxLiveTime, then grants them.
func TestRoleChangeAnswersHeldPullsAndFencesLocks(t *testing.T) {
	c, be := openRoleCore(t, true, nil)
	send(t, c, "T", "", 0)
	a := holdPull(t, c, "*", 20*time.Second, &fakeChannel{id: 1})
	be.leader.Store(false)
	c.Demote()
	if res := a.wait(t); res.Status != PullRetry || res.SuggestWhichBrokerID != MasterBrokerID {
		t.Fatalf("held pull on demotion: %+v", res)
	}

	be.leader.Store(true)
	if err := c.Promote(); err != nil {
		t.Fatal(err)
	}
	mq := []message.Queue{{Topic: "T", BrokerName: "broker-a", QueueID: 0}}
	if got := c.LockBatch("g", "c1", mq); len(got) != 0 {
		t.Fatalf("a new master locked %v at once", got)
	}
	c.clock.Advance(c.cfg.LockMaxLiveTime + time.Millisecond)
	if got := c.LockBatch("g", "c1", mq); len(got) != 1 {
		t.Fatalf("after the fence: locked %v", got)
	}
	send(t, c, "T", "", 0) // the promoted master takes writes
}
