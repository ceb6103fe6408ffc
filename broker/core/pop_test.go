package core

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// popReq is a pop of every queue of topic by group, not held.
func popReq(group, topic string, n int, invisible time.Duration) PopRequest {
	return PopRequest{Group: group, Topic: topic, QueueID: -1, MaxMessages: n, InvisibleTime: invisible, From: &fakeChannel{id: 7}}
}

func mustPop(t *testing.T, c *testCore, r PopRequest) PopResult {
	t.Helper()
	res, held, err := c.Pop(r, nil)
	if err != nil || held {
		t.Fatalf("pop: held %v, %v", held, err)
	}
	return res
}

// bodiesOf is the bodies of popped messages, sorted, with their attempts.
func bodiesOf(ps []Popped) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s#%d", p.Message.Body, p.DeliveryAttempt))
	}
	return sortStrings(out)
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func sendBody(t *testing.T, c *testCore, topic string, queue int32, body string, props ...string) {
	t.Helper()
	p := map[string]string{}
	for i := 0; i+1 < len(props); i += 2 {
		p[props[i]] = props[i+1]
	}
	if _, err := c.Send(SendRequest{Topic: topic, QueueID: queue, MaxReconsumeTimes: -1,
		Messages: []SendMessage{{Properties: p, Body: []byte(body)}}, Client: "test"}); err != nil {
		t.Fatalf("send %s to %s: %v", body, topic, err)
	}
}

func wantReason(t *testing.T, err error, want Reason) {
	t.Helper()
	if r, remark := reasonOf(err); err == nil || r != want {
		t.Fatalf("got %v (%s), want %v", r, remark, want)
	}
}

// TestPopAckChangeAndComeBack: popped messages are invisible to the
// group; an acknowledged one never comes back; a changed one has a new
// handle and the old one is refused; one not acknowledged in time comes
// back, through the retry topic, with its attempt raised, and its old
// handle is expired.
func TestPopAckChangeAndComeBack(t *testing.T) {
	c := openCore(t, nil)
	for i := range 3 {
		sendBody(t, c, "T", int32(i), fmt.Sprint("m", i))
	}
	res := mustPop(t, c, popReq("g", "T", 32, time.Minute))
	if res.Status != PopFound || len(res.Messages) != 3 {
		t.Fatalf("pop: %+v", res)
	}
	if got := bodiesOf(res.Messages); strings.Join(got, " ") != "m0#1 m1#1 m2#1" {
		t.Fatalf("popped %v", got)
	}
	if again := mustPop(t, c, popReq("g", "T", 32, time.Minute)); again.Status != PopNoNewMessage {
		t.Fatalf("in-flight messages popped again: %v", bodiesOf(again.Messages))
	}
	by := map[string]Popped{}
	for _, p := range res.Messages {
		by[string(p.Message.Body)] = p
	}
	if err := c.Ack("g", "T", by["m0"].Handle); err != nil {
		t.Fatal(err)
	}
	wantReason(t, c.Ack("g", "T", by["m0"].Handle), InvalidReceipt)
	c.advance(t, 10*time.Second)
	h1, err := c.ChangeInvisible("g", "T", by["m1"].Handle, 2*time.Minute)
	if err != nil || h1 == by["m1"].Handle {
		t.Fatalf("change: %q, %v", h1, err)
	}
	wantReason(t, c.Ack("g", "T", by["m1"].Handle), InvalidReceipt)
	// m2's minute passes: it comes back with attempt 2; m1 stays away.
	c.advance(t, 51*time.Second)
	wantReason(t, c.Ack("g", "T", by["m2"].Handle), ExpiredReceipt)
	back := mustPop(t, c, popReq("g", "T", 32, time.Minute))
	if got := bodiesOf(back.Messages); strings.Join(got, " ") != "m2#2" {
		t.Fatalf("came back %v, want m2#2", got)
	}
	m := back.Messages[0].Message
	if m.Topic != "T" || m.Property(message.PropertyRetryTopic) != "T" || m.Property(message.PropertyFirstPopTime) == "" {
		t.Fatalf("redelivered message: topic %s, props %v", m.Topic, m.Properties)
	}
	if err := c.Ack("g", "T", back.Messages[0].Handle); err != nil {
		t.Fatalf("ack of a message that came back: %v", err)
	}
	if err := c.Ack("g", "T", h1); err != nil {
		t.Fatalf("ack with the changed handle: %v", err)
	}
	c.advance(t, time.Hour)
	if res := mustPop(t, c, popReq("g", "T", 32, time.Minute)); res.Status != PopNoNewMessage {
		t.Fatalf("acknowledged messages came back: %v", bodiesOf(res.Messages))
	}
	if n := c.inflight.Len(); n != 0 {
		t.Fatalf("%d records in flight after every ack", n)
	}
}

// TestPopToDLQAfterMaxAttempts: a message never acknowledged is delivered
// retryMaxTimes+1 times, then goes to the group's %DLQ%, readable.
func TestPopToDLQAfterMaxAttempts(t *testing.T) {
	c := openCore(t, nil)
	g := groupconf.New("g")
	g.RetryMaxTimes = 2
	if err := c.UpdateGroup(g, "test"); err != nil {
		t.Fatal(err)
	}
	if n := c.MaxDeliveryAttempts("g"); n != 3 {
		t.Fatalf("max attempts %d, want 3", n)
	}
	sendBody(t, c, "T", 0, "x")
	for attempt := int32(1); attempt <= 3; attempt++ {
		res := mustPop(t, c, popReq("g", "T", 32, time.Minute))
		if len(res.Messages) != 1 || res.Messages[0].DeliveryAttempt != attempt {
			t.Fatalf("attempt %d: %v", attempt, bodiesOf(res.Messages))
		}
		c.advance(t, time.Minute)
	}
	if res := mustPop(t, c, popReq("g", "T", 32, time.Minute)); res.Status != PopNoNewMessage {
		t.Fatalf("a 4th attempt: %v", bodiesOf(res.Messages))
	}
	dlq := mustPop(t, c, popReq("reader", "%DLQ%g", 32, time.Minute))
	if got := bodiesOf(dlq.Messages); strings.Join(got, " ") != "x#4" {
		t.Fatalf("dead letters %v", got)
	}
}

// TestHeldPopWokenByArrival: a pop that finds nothing is held until a
// message arrives on any queue of the topic, answered once; a held pop's
// time passes on the clock.
func TestHeldPopWokenByArrival(t *testing.T) {
	c := openCore(t, nil)
	sendBody(t, c, "T", 0, "first")
	mustPop(t, c, popReq("g", "T", 32, time.Minute))
	var mu sync.Mutex
	var got []PopResult
	done := make(chan struct{}, 4)
	answer := func(res PopResult, err error) {
		if err != nil {
			t.Errorf("held pop: %v", err)
		}
		mu.Lock()
		got = append(got, res)
		mu.Unlock()
		done <- struct{}{}
	}
	r := popReq("g", "T", 32, time.Minute)
	r.PollTime = 20 * time.Second
	if _, held, err := c.Pop(r, answer); err != nil || !held {
		t.Fatalf("held %v, %v", held, err)
	}
	if c.HeldPops() != 1 || c.HeldPulls() != 5 {
		t.Fatalf("held pops %d, parked %d (one per queue, and the retry topic's to come)", c.HeldPops(), c.HeldPulls())
	}
	sendBody(t, c, "T", 3, "second")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("held pop not answered")
	}
	mu.Lock()
	if len(got) != 1 || strings.Join(bodiesOf(got[0].Messages), " ") != "second#1" {
		t.Fatalf("answers %+v", got)
	}
	mu.Unlock()
	if c.HeldPops() != 0 || c.HeldPulls() != 0 {
		t.Fatalf("after the answer: held pops %d, parked %d", c.HeldPops(), c.HeldPulls())
	}
	// Held again, and nothing comes: answered when the poll time passes.
	if _, held, _ := c.Pop(r, answer); !held {
		t.Fatal("not held")
	}
	c.advance(t, 20*time.Second)
	c.ExpireHeldPulls()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1].Status != PopNoNewMessage {
		t.Fatalf("expired answer %+v", got[1:])
	}
}

// TestBadReceiptHandles: malformed, forged and foreign handles are
// refused with InvalidReceipt, never a panic.
func TestBadReceiptHandles(t *testing.T) {
	c := openCore(t, nil)
	sendBody(t, c, "T", 0, "x")
	res := mustPop(t, c, popReq("g", "T", 1, time.Minute))
	h, err := pop.ParseHandle(res.Messages[0].Handle)
	if err != nil {
		t.Fatal(err)
	}
	forged := h
	forged.QueueOffset++
	foreign := h
	foreign.BrokerName = "broker-b"
	otherTime := h
	otherTime.PopTime--
	for _, bad := range []string{"", "x", "1 2 3", strings.Repeat("9 ", 9), forged.String(), foreign.String(), otherTime.String(),
		strings.Replace(res.Messages[0].Handle, "broker-a", "broker-a x", 1)} {
		wantReason(t, c.Ack("g", "T", bad), InvalidReceipt)
		_, err := c.ChangeInvisible("g", "T", bad, time.Minute)
		wantReason(t, err, InvalidReceipt)
	}
	wantReason(t, c.Ack("other", "T", res.Messages[0].Handle), InvalidReceipt)
	if err := c.Ack("g", "T", res.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
}

// TestPopProgress: a POP group's progress and lag are its pops' (its
// offset moves as it pops), with its messages in flight counted until
// acknowledged; the retry topic's progress is the group's too.
func TestPopProgress(t *testing.T) {
	c := openCore(t, nil)
	for i := range 3 {
		sendBody(t, c, "T", 0, fmt.Sprint(i))
	}
	res := mustPop(t, c, popReq("g", "T", 2, time.Minute))
	stats := c.ConsumeStats("g", "")
	var q0 QueueProgress
	for _, s := range stats {
		if s.Queue.Topic == "T" && s.Queue.QueueID == 0 {
			q0 = s
		}
	}
	if q0.BrokerOffset != 3 || q0.ConsumerOffset != 2 || q0.InFlight != 2 || q0.LastTimestamp == 0 {
		t.Fatalf("progress %+v", q0)
	}
	if err := c.Ack("g", "T", res.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
	c.advance(t, time.Minute)
	mustPop(t, c, popReq("g", "T", 32, time.Minute)) // brings back one, pops the third
	topics := map[string]int{}
	for _, s := range c.ConsumeStats("g", "") {
		topics[s.Queue.Topic] += s.InFlight
	}
	if topics["T"] != 1 || topics[pop.RetryTopic("g", "T")] != 1 {
		t.Fatalf("in flight by topic %v", topics)
	}
}

// TestHeldPopWokenWhenMessageComesBack: the due-time service brings back
// a message not acknowledged in time on its own (its loop, not a test's
// step), and a pop held meanwhile is answered with it.
func TestHeldPopWokenWhenMessageComesBack(t *testing.T) {
	c := openCore(t, nil)
	sendBody(t, c, "T", 0, "x")
	mustPop(t, c, popReq("g", "T", 32, 10*time.Second))
	done := holdPop(t, c, popReq("g", "T", 32, time.Minute))
	c.clock.Advance(10 * time.Second)
	if got := bodiesOf(waitPop(t, done, "the message coming back").Messages); strings.Join(got, " ") != "x#2" {
		t.Fatalf("woken with %v", got)
	}
}

// holdPop pops with a poll time, which must be held, and returns where its
// answer comes.
func holdPop(t *testing.T, c *testCore, r PopRequest) <-chan PopResult {
	t.Helper()
	done := make(chan PopResult, 1)
	r.PollTime = 20 * time.Second
	if _, held, err := c.Pop(r, func(res PopResult, err error) {
		if err != nil {
			t.Error(err)
		}
		done <- res
	}); err != nil || !held {
		t.Fatalf("held %v, %v", held, err)
	}
	return done
}

// waitPop waits for a held pop's answer, woken by what.
func waitPop(t *testing.T, done <-chan PopResult, what string) PopResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(10 * time.Second):
		t.Fatalf("the held pop was not answered on %s", what)
		return PopResult{}
	}
}

// TestDeleteTopicDropsInFlight: deleting a topic deletes its messages in
// flight, in the store and in memory; their handles name nothing.
func TestDeleteTopicDropsInFlight(t *testing.T) {
	c := openCore(t, nil)
	sendBody(t, c, "T", 0, "x")
	res := mustPop(t, c, popReq("g", "T", 1, time.Minute))
	if err := c.DeleteTopic("T", "test"); err != nil {
		t.Fatal(err)
	}
	if n := c.InFlight("g", "T"); n != 0 {
		t.Fatalf("%d in flight after the topic was deleted", n)
	}
	n := 0
	if err := c.Store().RangeInFlight(func(store.InFlight) bool { n++; return true }); err != nil || n != 0 {
		t.Fatalf("%d stored records after the topic was deleted (%v)", n, err)
	}
	wantReason(t, c.Ack("g", "T", res.Messages[0].Handle), InvalidReceipt)
}

// TestPopRetryTopicRefused: a group whose retry topic's name would be too
// long gets its messages not acknowledged in time in its %DLQ% (which
// fits), and the due-time service goes on delivering behind them.
func TestPopRetryTopicRefused(t *testing.T) {
	c := openCore(t, nil)
	group := strings.Repeat("g", 119) // %RETRY%<group>_T is 128 long, %DLQ%<group> 124
	sendBody(t, c, "T", 0, "x")
	sendBody(t, c, "T", 0, "y")
	mustPop(t, c, popReq(group, "T", 1, time.Minute))
	mustPop(t, c, popReq("g", "T", 2, 2*time.Minute))
	c.advance(t, 2*time.Minute)
	if got := bodiesOf(mustPop(t, c, popReq("reader", "%DLQ%"+group, 32, time.Minute)).Messages); strings.Join(got, " ") != "x#2" {
		t.Fatalf("dead letters %v", got)
	}
	if got := bodiesOf(mustPop(t, c, popReq("g", "T", 32, time.Minute)).Messages); strings.Join(got, " ") != "x#2 y#2" {
		t.Fatalf("the other group's messages came back as %v", got)
	}
}
