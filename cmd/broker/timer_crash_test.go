package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestProcessTimersAcrossSIGKILL kills the real binary with SIGKILL while
// it is delivering due timer messages (TIMER_DELIVER_MS), restarts it on
// the same store, and checks that every timer message is stored in its
// real topic exactly once and never before its time, and that timers due
// after the restart are delivered on time: the timer index, which lives in
// memory, is rebuilt from the timer topic and the checkpointed progress.
func TestProcessTimersAcrossSIGKILL(t *testing.T) {
	bin := buildBinary(t)
	conf := brokerConf(t, "flushDiskType=SYNC_FLUSH\n")
	const topic, queues = "Timed", 2
	// Bodies are "name@dueMs".
	sendTimer := func(invoke func(*protocol.Command) *protocol.Command, name string, due time.Time) {
		t.Helper()
		ms := strconv.FormatInt(due.UnixMilli(), 10)
		send(t, invoke, topic, name+"@"+ms, map[string]string{protocol.PropertyTimerDeliverMS: ms})
	}

	p, cl := startConf(t, bin, conf)
	invoke := p.invoker(t, cl)
	createTopic(t, invoke, topic, queues)
	const n, late = 600, 20
	start := time.Now()
	// Due 2 s after each send, so the deliveries are spread as the sends
	// were and the kill lands among them.
	for i := range n {
		sendTimer(invoke, fmt.Sprintf("d-%d", i), time.Now().Add(2*time.Second))
	}
	lateDue := time.Now().Add(12 * time.Second)
	for i := range late {
		sendTimer(invoke, fmt.Sprintf("late-%d", i), lateDue)
	}
	t.Logf("%d timer sends took %v", n+late, time.Since(start))
	read := func() map[string][]*protocol.MessageExt {
		return realTopicMessages(t, p.invoker(t, cl), topic, queues)
	}
	deadline := time.Now().Add(30 * time.Second)
	before := 0
	for ; before == 0; before = len(read()) {
		if time.Now().After(deadline) {
			t.Fatalf("no timer message delivered within 30 s; stderr:\n%s", p.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.kill(t)
	_ = cl.Close()
	t.Logf("SIGKILL with at least %d of %d delivered", before, n+late)

	p, cl = startConf(t, bin, conf)
	if time.Now().After(lateDue) {
		t.Fatalf("the restart took until after the late timers' time; the test proves nothing of their timeliness")
	}
	var got map[string][]*protocol.MessageExt
	deadline = time.Now().Add(60 * time.Second)
	for got = read(); len(got) < n+late; got = read() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d timer messages delivered within 60 s of the restart; stderr:\n%s", len(got), n+late, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for body, ms := range got {
		if len(ms) != 1 {
			t.Errorf("%s stored %d times in its real topic, want once", body, len(ms))
		}
		_, dueText, _ := strings.Cut(body, "@")
		due, _ := strconv.ParseInt(dueText, 10, 64)
		if at := ms[0].StoreTimestamp; at < due {
			t.Errorf("%s stored at %d, %d ms before its time", body, at, due-at)
		} else if strings.HasPrefix(body, "late-") && at-due > 2000 {
			t.Errorf("%s stored %d ms after its time", body, at-due)
		}
	}
	p.stop(t)
}

// realTopicMessages reads every message of the topic's queues, by body.
func realTopicMessages(t *testing.T, invoke func(*protocol.Command) *protocol.Command, topic string, queues int32) map[string][]*protocol.MessageExt {
	t.Helper()
	out := map[string][]*protocol.MessageExt{}
	for q := range queues {
		for off := int64(0); ; {
			h := protocol.PullMessageRequestHeader{ConsumerGroup: "reader", Topic: topic, QueueID: q, QueueOffset: off,
				MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "*", ExpressionType: protocol.ExpressionTypeTag}
			resp := invoke(protocol.NewRequest(protocol.ReqPullMessage, h.Encode(), nil))
			if resp.Code != protocol.RespSuccess {
				break
			}
			msgs, err := message.DecodeMessages(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				out[string(m.Body)] = append(out[string(m.Body)], m)
			}
			var ph protocol.PullMessageResponseHeader
			if err := ph.Decode(resp.ExtFields); err != nil {
				t.Fatal(err)
			}
			off = ph.NextBeginOffset
		}
	}
	return out
}
