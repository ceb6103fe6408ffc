package broker

import (
	"context"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func decodePullHeader(t *testing.T, resp *protocol.Command) protocol.PullMessageResponseHeader {
	t.Helper()
	var h protocol.PullMessageResponseHeader
	if err := h.Decode(resp.ExtFields); err != nil {
		t.Fatalf("pull response header: %v", err)
	}
	return h
}

func TestPullStatuses(t *testing.T) {
	_, rc := withTopic(t, "P", 2)
	sub := protocol.PullFlagSubscription
	pull := func(topic string, q int32, off int64, max int32, flag int32) *protocol.Command {
		h := pullHeader("g", topic, q, off, max, flag)
		h.Subscription = "*"
		return rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	}

	expect(t, pull("Missing", 0, 0, 32, sub), protocol.RespTopicNotExist, "not exist")
	expect(t, pull("P", 2, 0, 32, sub), protocol.RespInvalidParameter, "queueId[2] is illegal")
	expect(t, pull("P", -1, 0, 32, sub), protocol.RespInvalidParameter, "illegal")
	// Empty queue at offset 0 without suspend: 19 at once.
	resp := pull("P", 0, 0, 32, sub)
	expect(t, resp, protocol.RespPullNotFound, "")
	// Empty queue at another offset: 21 back to 0.
	resp = pull("P", 0, 5, 32, sub)
	expect(t, resp, protocol.RespPullOffsetMoved, "")
	if h := decodePullHeader(t, resp); h.NextBeginOffset != 0 {
		t.Fatalf("nextBeginOffset %d, want 0", h.NextBeginOffset)
	}

	for i := range 3 {
		expect(t, rc.send("P", 0, "A", string(rune('a'+i))), protocol.RespSuccess, "")
	}
	// maxMsgNums 0 still returns one message.
	resp = pull("P", 0, 0, 0, sub)
	expect(t, resp, protocol.RespSuccess, "")
	if msgs, _ := message.DecodeMessages(resp.Body); len(msgs) != 1 {
		t.Fatalf("maxMsgNums=0 returned %d messages", len(msgs))
	}
	if h := decodePullHeader(t, resp); h.NextBeginOffset != 1 || h.MinOffset != 0 || h.MaxOffset != 3 || h.SuggestWhichBrokerID != 0 {
		t.Fatalf("header %+v", h)
	}
	// At the end: 19 with the same offset.
	resp = pull("P", 0, 3, 32, sub)
	expect(t, resp, protocol.RespPullNotFound, "OFFSET_OVERFLOW_ONE")
	if h := decodePullHeader(t, resp); h.NextBeginOffset != 3 {
		t.Fatalf("nextBeginOffset %d, want 3", h.NextBeginOffset)
	}
	// Beyond the end: 21 to the max.
	resp = pull("P", 0, 10, 32, sub)
	expect(t, resp, protocol.RespPullOffsetMoved, "OFFSET_OVERFLOW_BADLY")
	if h := decodePullHeader(t, resp); h.NextBeginOffset != 3 {
		t.Fatalf("nextBeginOffset %d, want 3", h.NextBeginOffset)
	}
	// Everything filtered out: 20, past the scanned messages.
	h := pullHeader("g", "P", 0, 0, 32, sub)
	h.Subscription = "B || C"
	resp = rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	expect(t, resp, protocol.RespPullRetryImmediately, "")
	if ph := decodePullHeader(t, resp); ph.NextBeginOffset != 3 {
		t.Fatalf("nextBeginOffset %d, want 3", ph.NextBeginOffset)
	}
	// No subscription flag and no heartbeat: 24.
	expect(t, pull("P", 0, 0, 32, 0), protocol.RespSubscriptionNotExist, "heartbeat")
	// A SQL92 expression that does not parse: 23 with the parser's message.
	h = pullHeader("g", "P", 0, 0, 32, sub)
	h.ExpressionType = "SQL92"
	h.Subscription = "a LIKE 'x%'"
	expect(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil), protocol.RespSubscriptionParseFailed, "LIKE is not supported")
	// An expression type no broker has: refused with a remark.
	h.ExpressionType = "CLASS"
	expect(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil), protocol.RespSystemError, "CLASS")
	// A malformed header.
	expect(t, rc.call(protocol.ReqPullMessage, map[string]string{"topic": "P"}, nil), protocol.RespSystemError, "missing")
}

func TestPullUsesHeartbeatSubscription(t *testing.T) {
	_, rc := withTopic(t, "H", 1)
	for _, tag := range []string{"A", "B", "C", "D"} {
		expect(t, rc.send("H", 0, tag, tag), protocol.RespSuccess, "")
	}
	sub := protocol.BuildSubscriptionData("H", "A || C")
	sub.SubVersion = 5
	expect(t, rc.heartbeat("c1", "g1", sub), protocol.RespSuccess, "")
	h := pullHeader("g1", "H", 0, 0, 32, protocol.PullFlagSuspend)
	resp := rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	msgs, _ := message.DecodeMessages(resp.Body)
	if len(msgs) != 2 || msgs[0].Tags() != "A" || msgs[1].Tags() != "C" {
		t.Fatalf("got %d messages", len(msgs))
	}
	// A newer subscription version than registered: 25.
	h.SubVersion = 6
	expect(t, rc.call(protocol.ReqPullMessage, h.Encode(), nil), protocol.RespSubscriptionNotLatest, "")
}

func TestLongPollWakesOnArrival(t *testing.T) {
	b, rc := withTopic(t, "LP", 1)
	expect(t, rc.heartbeat("c1", "g", protocol.BuildSubscriptionData("LP", "*")), protocol.RespSuccess, "")

	h := pullHeader("g", "LP", 0, 0, 32, protocol.PullFlagSuspend|protocol.PullFlagCommitOffset)
	h.CommitOffset = 0
	got := make(chan *protocol.Command, 1)
	go func() { got <- rc.callTimeout(protocol.ReqPullMessage, h.Encode(), nil, 10*time.Second) }()
	testwait.For(t, testwait.Default, "the pull to be held", func() bool { return b.core.HeldPulls() == 1 })
	expect(t, rc.send("LP", 0, "", "wake"), protocol.RespSuccess, "")
	// The pull has one answer: an early one (before the message) would be
	// the one read here, and fail the checks below.
	resp := <-got
	expect(t, resp, protocol.RespSuccess, "")
	msgs, _ := message.DecodeMessages(resp.Body)
	if len(msgs) != 1 || string(msgs[0].Body) != "wake" {
		t.Fatalf("woken pull returned %d messages", len(msgs))
	}
	if b.core.HeldPulls() != 0 {
		t.Fatalf("%d pulls still held", b.core.HeldPulls())
	}
}

// A held pull is answered PULL_NOT_FOUND when its suspend time passes on
// the broker's clock, not before.
func TestLongPollExpires(t *testing.T) {
	clk := fakeclock.Default()
	b := startBrokerIn(t, t.TempDir(), clk)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("LX", 1)
	h := pullHeader("g", "LX", 0, 0, 32, protocol.PullFlagSuspend|protocol.PullFlagSubscription|protocol.PullFlagCommitOffset)
	h.Subscription = "*"
	h.SuspendTimeoutMillis = 15000
	h.CommitOffset = 7
	got := make(chan *protocol.Command, 1)
	go func() { got <- rc.callTimeout(protocol.ReqPullMessage, h.Encode(), nil, 30*time.Second) }()
	testwait.For(t, testwait.Default, "the pull to be held", func() bool { return b.core.HeldPulls() == 1 })
	clk.Advance(15*time.Second - time.Millisecond)
	b.core.ExpireHeldPulls()
	if b.core.HeldPulls() != 1 {
		t.Fatal("the pull expired before its suspend time")
	}
	clk.Advance(time.Millisecond)
	b.core.ExpireHeldPulls()
	resp := <-got
	expect(t, resp, protocol.RespPullNotFound, "")
	if ph := decodePullHeader(t, resp); ph.NextBeginOffset != 0 {
		t.Fatalf("nextBeginOffset %d", ph.NextBeginOffset)
	}
	// The piggy-backed commit was applied by the first run.
	if off, ok := b.ConsumerOffset("g", "LX", 0); !ok || off != 7 {
		t.Fatalf("commit offset %d %v, want 7", off, ok)
	}
}

func TestCloseAnswersHeldPulls(t *testing.T) {
	b, rc := withTopic(t, "HC", 1)
	h := pullHeader("g", "HC", 0, 0, 32, protocol.PullFlagSuspend|protocol.PullFlagSubscription)
	h.Subscription = "*"
	got := make(chan *protocol.Command, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := rc.cl.Invoke(ctx, rc.addr, protocol.NewRequest(protocol.ReqPullMessage, h.Encode(), nil))
		if err != nil {
			t.Errorf("held pull: %v", err)
		}
		got <- resp
	}()
	testwait.For(t, testwait.Default, "the pull to be held", func() bool { return b.core.HeldPulls() == 1 })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	resp := <-got
	if resp == nil || resp.Code != protocol.RespPullNotFound {
		t.Fatalf("held pull answered with %v", resp)
	}
}

func TestLongPollHoldsOnPastFilteredArrivals(t *testing.T) {
	b, rc := withTopic(t, "LF", 1)
	expect(t, rc.heartbeat("c1", "g", protocol.BuildSubscriptionData("LF", "A")), protocol.RespSuccess, "")
	h := pullHeader("g", "LF", 0, 0, 32, protocol.PullFlagSuspend)
	got := make(chan *protocol.Command, 1)
	go func() { got <- rc.callTimeout(protocol.ReqPullMessage, h.Encode(), nil, 10*time.Second) }()
	testwait.For(t, testwait.Default, "the pull to be held", func() bool { return b.core.HeldPulls() == 1 })
	expect(t, rc.send("LF", 0, "B", "not for me"), protocol.RespSuccess, "")
	// The B arrival wakes the pull, which finds nothing for A and is held
	// again from offset 1.
	testwait.For(t, testwait.Default, "the pull held again", func() bool { return b.core.HeldPulls() == 1 && b.holdsAt(1) })
	expect(t, rc.send("LF", 0, "A", "for me"), protocol.RespSuccess, "")
	// One answer: had the B arrival been answered, that answer would be the
	// one read here, and fail the checks below.
	resp := <-got
	expect(t, resp, protocol.RespSuccess, "")
	msgs, _ := message.DecodeMessages(resp.Body)
	if len(msgs) != 1 || string(msgs[0].Body) != "for me" || decodePullHeader(t, resp).NextBeginOffset != 2 {
		t.Fatalf("woken pull returned %d messages", len(msgs))
	}
}
