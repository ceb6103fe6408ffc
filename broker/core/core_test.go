package core

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// The core's tests call it directly, with in-memory Channels and an
// in-memory filesystem: no sockets, no remoting commands.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type testCore struct {
	*Core
	clock *fakeclock.Clock
}

// openCore opens a started core over an in-memory store; adjust may
// change its config and store options first.
func openCore(t testing.TB, adjust func(*Config, *store.Options)) *testCore {
	t.Helper()
	c := openCoreNoCleanup(t, adjust)
	t.Cleanup(func() {
		if err := c.Close(true); err != nil {
			t.Error(err)
		}
	})
	return c
}

// openCoreNoCleanup is openCore for a test that closes the core itself.
func openCoreNoCleanup(t testing.TB, adjust func(*Config, *store.Options)) *testCore {
	t.Helper()
	clock := fakeclock.Default()
	levels, err := due.ParseLevels(due.DefaultLevels)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		BrokerName: "broker-a", ClusterName: "DefaultCluster",
		AutoCreateTopicEnable: true, DefaultTopicQueueNums: 4, MaxMessageSize: 4 << 20,
		FileReservedTime: 72 * time.Hour, MaxSuspend: 25 * time.Second,
		OffsetPersistInterval: time.Hour, ChannelExpiry: 120 * time.Second,
		LockMaxLiveTime: time.Minute, ConsumerCallTimeout: 5 * time.Second,
		TransactionTimeout: 6 * time.Second, TransactionCheckMax: 15, TransactionCheckInterval: time.Hour,
		DelayLevels: levels, Now: clock.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	sopts := store.DefaultOptions("/core")
	sopts.FS = vfs.NewMem()
	sopts.Now = clock.Now
	sopts.FlushInterval = -1
	sopts.RetentionInterval = -1
	if adjust != nil {
		adjust(&cfg, &sopts)
	}
	c, err := Open(cfg, sopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(netip.MustParseAddrPort("127.0.0.1:10911")); err != nil {
		t.Fatal(err)
	}
	return &testCore{Core: c, clock: clock}
}

// fakeChannel is an in-memory client connection that records what the
// core sends it.
type fakeChannel struct {
	id     uint64
	mu     sync.Mutex
	closed bool
	notes  []string
}

func (f *fakeChannel) ID() uint64         { return f.id }
func (f *fakeChannel) RemoteAddr() string { return "10.0.0.1:5000" }
func (f *fakeChannel) Closed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}
func (f *fakeChannel) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, s)
}
func (f *fakeChannel) NotifyConsumerIDsChanged(group string) { f.note("notify " + group) }
func (f *fakeChannel) ResetOffset(topic, group string, _ int64, _ map[message.Queue]int64) {
	f.note("reset " + topic + " " + group)
}
func (f *fakeChannel) CheckTransactionState(h transaction.Check, _ []byte) {
	f.note("check " + h.MsgID)
}
func (f *fakeChannel) ConsumerRunningInfo(_ context.Context, group, _ string, _ bool, done func(ClientReply, error)) error {
	done(ClientReply{OK: true, Body: []byte("info of " + group)}, nil)
	return nil
}

// ConsumeMessageDirectly never answers: the call ends when the core's
// deadline does, as the transport ends a call that gets no answer.
func (f *fakeChannel) ConsumeMessageDirectly(ctx context.Context, _ DirectConsume, _ []byte, done func(ClientReply, error)) error {
	go func() {
		<-ctx.Done()
		done(ClientReply{}, ctx.Err())
	}()
	return nil
}
func (f *fakeChannel) ConsumerStatus(_ context.Context, _, _ string, done func([]byte, error)) error {
	done([]byte(`{}`), nil)
	return nil
}

func (f *fakeChannel) PushReply(_ context.Context, r PushedReply, done func(ClientReply, error)) error {
	f.note("reply " + r.Message.Properties[message.PropertyCorrelationID])
	done(ClientReply{OK: true}, nil)
	return nil
}

func send(t *testing.T, c *testCore, topic, tags string, queue int32) SendResult {
	t.Helper()
	props := map[string]string{}
	if tags != "" {
		props[message.PropertyTags] = tags
	}
	res, err := c.Send(SendRequest{Topic: topic, QueueID: queue, MaxReconsumeTimes: -1,
		Messages: []SendMessage{{Properties: props, Body: []byte("body")}}, Client: "test"})
	if err != nil {
		t.Fatalf("send to %s: %v", topic, err)
	}
	return res
}

// answers collects the answers of held pulls.
type answers struct {
	mu  sync.Mutex
	got []PullResult
	ch  chan struct{}
}

// holdPull parks a pull of T/0 at offset 1, filtered by the tag
// expression expr, from ch, for suspend; the test fails unless it is held.
func holdPull(t *testing.T, c *testCore, expr string, suspend time.Duration, ch Channel) *answers {
	t.Helper()
	a := newAnswers()
	req := PullRequest{Group: "g", Topic: "T", QueueID: 0, QueueOffset: 1, MaxMsgNums: 32, Suspend: true,
		SuspendTimeout: suspend, HasSubscription: true, Expression: expr, From: ch}
	if _, held, err := c.Pull(req, a.answer); err != nil || !held {
		t.Fatalf("pull at the end: held %v, err %v", held, err)
	}
	return a
}

// heldPull opens a core, fills T's offset 0 and holds a pull at offset 1
// from ch.
func heldPull(t *testing.T, expr string, suspend time.Duration, ch Channel) (*testCore, *answers) {
	t.Helper()
	c := openCore(t, nil)
	send(t, c, "T", "", 0) // creates T and fills offset 0
	return c, holdPull(t, c, expr, suspend, ch)
}

// drainedAnswers drains c and asserts that a has had want answers then.
func drainedAnswers(t *testing.T, c *testCore, a *answers, want int, format string) {
	t.Helper()
	c.Drain()
	if n := a.count(); n != want {
		t.Fatalf(format, n)
	}
}

func newAnswers() *answers { return &answers{ch: make(chan struct{}, 16)} }

func (a *answers) answer(res PullResult, err error) {
	if err != nil {
		res = PullResult{Status: 255, Remark: err.Error()}
	}
	a.mu.Lock()
	a.got = append(a.got, res)
	a.mu.Unlock()
	a.ch <- struct{}{}
}

func (a *answers) wait(t *testing.T) PullResult {
	t.Helper()
	select {
	case <-a.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("held pull not answered")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got[len(a.got)-1]
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

func TestErrorsCarryReasonAndRemark(t *testing.T) {
	c := openCore(t, nil)
	_, err := c.Send(SendRequest{Topic: "bad topic", Messages: []SendMessage{{Body: []byte("x")}}})
	reason, remark := reasonOf(err)
	if reason != InvalidName || !strings.Contains(remark, "illegal characters") {
		t.Fatalf("bad topic: %v %q", reason, remark)
	}
	_, _, err = c.Pull(PullRequest{Group: "g", Topic: "Nowhere"}, nil)
	if reason, _ := reasonOf(err); reason != TopicNotFound {
		t.Fatalf("pull of a missing topic: %v (%v)", reason, err)
	}
	if _, ok := ReasonOf(fmt.Errorf("wrapped: %w", io.EOF)); ok {
		t.Fatal("a plain error has a reason")
	}
}

// reasonOf is err's refusal, or Internal with its text for another error
// (as a door answers it).
func reasonOf(err error) (Reason, string) {
	if e, ok := ReasonOf(err); ok {
		return e.Reason, e.Remark
	}
	if err == nil {
		return Internal, "<nil>"
	}
	return Internal, err.Error()
}

func TestHeldPullAnsweredOnceByArrival(t *testing.T) {
	ch := &fakeChannel{id: 1}
	c, a := heldPull(t, "*", 20*time.Second, ch)
	if c.HeldPulls() != 1 {
		t.Fatalf("%d held pulls", c.HeldPulls())
	}
	send(t, c, "T", "", 0)
	res := a.wait(t)
	if res.Status != PullFound || res.Count != 1 || res.NextBeginOffset != 2 {
		t.Fatalf("answer: %+v", res)
	}
	send(t, c, "T", "", 0)
	drainedAnswers(t, c, a, 1, "answered %d times")
}

func TestHeldPullExpiresOnTheClock(t *testing.T) {
	c, a := heldPull(t, "*", 5*time.Second, &fakeChannel{id: 1})
	c.clock.Advance(5*time.Second + time.Millisecond)
	c.holds.ExpireDue(c.clock.Now())
	if res := a.wait(t); res.Status != PullNoNewMessage || res.NextBeginOffset != 1 {
		t.Fatalf("expired answer: %+v", res)
	}
}

// A held pull woken by arrivals its tags filter out is held again past
// them, from the result's next offset (no wire answer parsed back).
func TestHeldPullSkipsFilteredArrivals(t *testing.T) {
	c := openCore(t, nil)
	send(t, c, "T", "A", 0)
	a := holdPull(t, c, "A", 20*time.Second, &fakeChannel{id: 1})
	send(t, c, "T", "B", 0)
	testwait.Until(t, testwait.Default, "the pull held again past the filtered message", func() error {
		if offs := c.HeldOffsets("T", 0); c.HeldPulls() != 1 || len(offs) != 1 || offs[0] != 2 {
			return fmt.Errorf("held at %v, %d answers", offs, a.count())
		}
		return nil
	})
	if n := a.count(); n != 0 {
		t.Fatalf("answered %d times for a filtered arrival", n)
	}
	send(t, c, "T", "A", 0)
	if res := a.wait(t); res.Status != PullFound || res.Count != 1 || res.NextBeginOffset != 3 {
		t.Fatalf("answer: %+v", res)
	}
}

func TestHeldPullOfAClosedChannelIsDropped(t *testing.T) {
	ch := &fakeChannel{id: 1}
	c, a := heldPull(t, "*", 20*time.Second, ch)
	ch.mu.Lock()
	ch.closed = true
	ch.mu.Unlock()
	send(t, c, "T", "", 0)
	drainedAnswers(t, c, a, 0, "a gone consumer was answered %d times")
}

func TestDrainAnswersHeldPulls(t *testing.T) {
	c, a := heldPull(t, "*", 20*time.Second, &fakeChannel{id: 1})
	drainedAnswers(t, c, a, 1, "drain answered %d times")
	// After the drain, a pull is answered at once.
	req := PullRequest{Group: "g", Topic: "T", QueueID: 0, QueueOffset: 1, MaxMsgNums: 32, Suspend: true,
		SuspendTimeout: 20 * time.Second, HasSubscription: true, Expression: "*", From: &fakeChannel{id: 1}}
	if res, held, err := c.Pull(req, a.answer); held || err != nil || res.Status != PullNoNewMessage {
		t.Fatalf("pull after drain: %+v held %v err %v", res, held, err)
	}
}

func TestHeartbeatNotifiesGroupThroughChannels(t *testing.T) {
	c := openCore(t, nil)
	hb := func(ch *fakeChannel, id string) {
		t.Helper()
		err := c.Heartbeat(ch, ClientMeta{Language: "GO", Version: 317}, Heartbeat{
			ClientID: id,
			Consumers: []clients.ConsumerData{{Group: "g", MessageModel: groupconf.Clustering,
				Subscriptions: []clients.Subscription{{Topic: "T", Expression: "*"}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b := &fakeChannel{id: 1}, &fakeChannel{id: 2}
	hb(a, "a")
	hb(b, "b")
	if ids, err := c.ConsumerList("g"); err != nil || len(ids) != 2 {
		t.Fatalf("consumers: %v %v", ids, err)
	}
	if _, ok := c.Topic("%RETRY%g"); !ok {
		t.Fatal("retry topic not created")
	}
	a.mu.Lock()
	gotA := strings.Join(a.notes, ";")
	a.mu.Unlock()
	if !strings.Contains(gotA, "notify g") {
		t.Fatalf("a was not told b joined: %q", gotA)
	}
	c.ChannelClosed(2)
	c.Drain() // waits for the notification spawned by the close
	if ids := c.ConsumerIDs("g"); len(ids) != 1 || ids[0] != "a" {
		t.Fatalf("after b's connection closed: %v", ids)
	}
}

func TestForwardedCallTimesOut(t *testing.T) {
	c := openCore(t, func(cfg *Config, _ *store.Options) { cfg.ConsumerCallTimeout = 50 * time.Millisecond })
	ch := &fakeChannel{id: 1}
	if err := c.Heartbeat(ch, ClientMeta{}, Heartbeat{ClientID: "cid",
		Consumers: []clients.ConsumerData{{Group: "g", MessageModel: groupconf.Broadcasting}}}); err != nil {
		t.Fatal(err)
	}
	res := send(t, c, "T", "", 0)
	got := make(chan error, 1)
	c.ConsumeMessageDirectly(DirectConsume{Group: "g", ClientID: "cid", MsgID: res.MsgIDs[0], Topic: "T"}, func(_ ClientReply, err error) { got <- err })
	if reason, remark := reasonOf(<-got); reason != ClientTimeout || !strings.Contains(remark, "Timeout") {
		t.Fatalf("unanswered call: %v %q", reason, remark)
	}
	info := make(chan ClientReply, 1)
	c.ConsumerRunningInfo("g", "cid", false, func(r ClientReply, err error) {
		if err != nil {
			t.Error(err)
		}
		info <- r
	})
	if r := <-info; string(r.Body) != "info of g" {
		t.Fatalf("running info: %+v", r)
	}
	c.ConsumerRunningInfo("g", "nobody", false, func(_ ClientReply, err error) { got <- err })
	if reason, remark := reasonOf(<-got); reason != NoClient || !strings.Contains(remark, "not online") {
		t.Fatalf("absent consumer: %v %q", reason, remark)
	}
}

// A persist writes every changed offset in one store op: one sync whatever
// the number of offsets that changed.
func TestPersistOffsetsSyncsOnce(t *testing.T) {
	c := openCore(t, func(_ *Config, o *store.Options) { o.FlushMode = store.SyncFlush })
	for _, n := range []int{1, 50, 500} {
		for i := range n {
			c.CommitConsumerOffset(fmt.Sprint("g", i%7), fmt.Sprint("T", i), int32(i%4), int64(i+n))
		}
		before := c.Store().Stats().Syncs
		if err := c.PersistOffsets(); err != nil {
			t.Fatal(err)
		}
		if got := c.Store().Stats().Syncs - before; got != 1 {
			t.Fatalf("persisting %d changed offsets took %d syncs, want 1", n, got)
		}
		// Nothing changed since: no write at all.
		before = c.Store().Stats().Syncs
		if err := c.PersistOffsets(); err != nil {
			t.Fatal(err)
		}
		if got := c.Store().Stats().Syncs - before; got != 0 {
			t.Fatalf("a persist with nothing changed took %d syncs", got)
		}
	}
	var n int
	err := c.Store().RangeConsumerOffsets(func(string, string, int32, int64) bool { n++; return true })
	if err != nil || n == 0 {
		t.Fatalf("stored offsets: %d, %v", n, err)
	}
}

// A pull with the suspend flag but no suspend time is answered at once.
func TestPullWithoutSuspendTimeIsNotHeld(t *testing.T) {
	c := openCore(t, nil)
	send(t, c, "T", "", 0)
	a := newAnswers()
	req := PullRequest{Group: "g", Topic: "T", QueueID: 0, QueueOffset: 1, MaxMsgNums: 32, Suspend: true,
		SuspendTimeout: 0, HasSubscription: true, Expression: "*", From: &fakeChannel{id: 1}}
	res, held, err := c.Pull(req, a.answer)
	if err != nil || held || res.Status != PullNoNewMessage || c.HeldPulls() != 0 {
		t.Fatalf("pull with suspend time 0: %+v held %v err %v, %d held", res, held, err, c.HeldPulls())
	}
}
