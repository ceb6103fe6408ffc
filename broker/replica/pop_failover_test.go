package replica

import (
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/topicconf"
)

// coreGroup is a group whose nodes each run a broker core over their
// backend, as a replicated broker does.
type coreGroup struct {
	*group
	clock *fakeclock.Clock
	hooks []atomic.Pointer[core.Core]
	cores []*core.Core
}

func newCoreGroup(t *testing.T, size int) *coreGroup {
	t.Helper()
	cg := &coreGroup{clock: fakeclock.Default(), hooks: make([]atomic.Pointer[core.Core], size), cores: make([]*core.Core, size)}
	cg.group = newGroup(t, size, func(c *Config) {
		i, _ := strconv.Atoi(strings.TrimPrefix(c.ID, "n"))
		c.Store.OnArrival = func(topic string, q int32, max int64) {
			if cc := cg.hooks[i].Load(); cc != nil {
				cc.OnArrival(topic, q, max)
			}
		}
	})
	for i := range size {
		cg.open(i)
	}
	t.Cleanup(func() {
		for i, c := range cg.cores {
			if c != nil {
				_ = c.Close(false)
				cg.cores[i] = nil
			}
		}
	})
	return cg
}

// open runs a core over node i's backend.
func (cg *coreGroup) open(i int) {
	cg.t.Helper()
	levels, err := due.ParseLevels(due.DefaultLevels)
	if err != nil {
		cg.t.Fatal(err)
	}
	cfg := core.Config{
		BrokerName: "broker-a", ClusterName: "DefaultCluster", AutoCreateTopicEnable: true, DefaultTopicQueueNums: 2,
		MaxMessageSize: 4 << 20, FileReservedTime: 72 * time.Hour, MaxSuspend: 20 * time.Second,
		OffsetPersistInterval: time.Hour, ChannelExpiry: 2 * time.Minute, LockMaxLiveTime: time.Minute,
		ConsumerCallTimeout: 5 * time.Second, TransactionTimeout: 6 * time.Second, TransactionCheckMax: 15,
		TransactionCheckInterval: time.Hour, DelayLevels: levels, Now: cg.clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	c, err := core.OpenBackend(cfg, NewBackend(cg.node(i), 10*time.Second))
	if err != nil {
		cg.t.Fatal(err)
	}
	if err := c.Start(netip.MustParseAddrPort("10.0.0.1:10911")); err != nil {
		cg.t.Fatal(err)
	}
	cg.hooks[i].Store(c)
	cg.cores[i] = c
}

// crash stops node i and its core, as a crash of the process.
func (cg *coreGroup) crash(i int) {
	cg.t.Helper()
	cg.hooks[i].Store(nil)
	_ = cg.cores[i].Close(false)
	cg.cores[i] = nil
	cg.stop(i)
}

// master waits for a leader (not in except), for its announcement, and
// makes its core master, as the broker does on the announcement.
func (cg *coreGroup) master(except ...int) (int, *core.Core) {
	cg.t.Helper()
	i := cg.leader(except...)
	testwait.For(cg.t, 30*time.Second, "the leader's announcement", func() bool {
		select {
		case l := <-cg.node(i).Leadership():
			return l.IsLeader
		default:
			return false
		}
	})
	if err := cg.cores[i].Promote(); err != nil {
		cg.t.Fatal(err)
	}
	return i, cg.cores[i]
}

func popAll(t *testing.T, c *core.Core, n int) core.PopResult {
	t.Helper()
	res, _, err := c.Pop(core.PopRequest{Group: "g", Topic: "T", QueueID: -1, MaxMessages: n, InvisibleTime: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPopInFlightSurvivesFailover: a message popped on a leader that then
// dies is, on the new leader, either acknowledged (an ack before the
// crash holds, its handle is refused after; a handle given before the
// crash acknowledges after it) or comes back when its time passes; the
// group's offset moved by the pop holds, so nothing is popped twice.
func TestPopInFlightSurvivesFailover(t *testing.T) {
	cg := newCoreGroup(t, 3)
	old, leader := cg.master()
	c := leader
	if err := c.CreateTopic(topicconf.Config{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}, "test"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := c.Send(core.SendRequest{Topic: "T", QueueID: int32(i % 2), MaxReconsumeTimes: -1,
			Messages: []core.SendMessage{{Body: []byte{'m', byte('0' + i)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	p := popAll(t, c, 4)
	if len(p.Messages) != 4 {
		t.Fatalf("popped %d", len(p.Messages))
	}
	by := map[string]core.Popped{}
	for _, m := range p.Messages {
		by[string(m.Message.Body)] = m
	}
	if err := c.Ack("g", "T", by["m0"].Handle); err != nil {
		t.Fatal(err)
	}
	h1, err := c.ChangeInvisible("g", "T", by["m1"].Handle, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cg.crash(old)

	nl, c := cg.master(old)
	for i, f := range cg.cores {
		if f == nil || i == nl {
			continue
		}
		_, _, err := f.Pop(core.PopRequest{Group: "g", Topic: "T", QueueID: -1, MaxMessages: 1, InvisibleTime: time.Minute}, nil)
		if e, ok := core.ReasonOf(err); !ok || e.Reason != core.Unavailable {
			t.Fatalf("a follower's pop: %v", err)
		}
	}
	if res := popAll(t, c, 4); res.Status != core.PopNoNewMessage {
		t.Fatalf("the new leader popped again %d messages", len(res.Messages))
	}
	for _, h := range []string{by["m0"].Handle, by["m1"].Handle} {
		if e, ok := core.ReasonOf(c.Ack("g", "T", h)); !ok || e.Reason != core.InvalidReceipt {
			t.Fatalf("a stale handle on the new leader: %v", e)
		}
	}
	if err := c.Ack("g", "T", h1); err != nil {
		t.Fatalf("the changed handle on the new leader: %v", err)
	}
	if err := c.Ack("g", "T", by["m2"].Handle); err != nil {
		t.Fatalf("a handle from before the crash on the new leader: %v", err)
	}
	// m3 was never acknowledged: it comes back when its minute passes.
	cg.clock.Advance(time.Minute)
	if _, err := c.Due().Step(); err != nil {
		t.Fatal(err)
	}
	back := popAll(t, c, 4)
	if len(back.Messages) != 1 || string(back.Messages[0].Message.Body) != "m3" || back.Messages[0].DeliveryAttempt != 2 {
		t.Fatalf("came back on the new leader: %+v", back.Messages)
	}
	if err := c.Ack("g", "T", back.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
	if n := c.InFlight("g", "T"); n != 0 {
		t.Fatalf("%d in flight after every ack", n)
	}
}
