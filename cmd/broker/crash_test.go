package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestProcessDelayedDeliveryAcrossSIGKILL kills the real binary with
// SIGKILL while it is moving due delayed messages from the schedule topic
// to their real topic, restarts it on the same store, and checks that
// every delayed message is stored in its real topic exactly once: none
// lost with the schedule progress that was not yet written, none written
// twice because progress lagged the delivery. Nothing of the broker's
// shutdown runs, unlike the in-process crash of integration's
// TestDelayedSurviveRestart. SYNC_FLUSH makes every acknowledged send
// durable, so a missing message is the schedule's loss, not the log's tail.
func TestProcessDelayedDeliveryAcrossSIGKILL(t *testing.T) {
	bin := buildBinary(t)
	// Level 1 is 2 s: long enough that every send is stored before the
	// first one comes due, so the deliveries are spread as the sends were.
	conf := brokerConf(t, "flushDiskType=SYNC_FLUSH\nmessageDelayLevel=2s 5s\n")
	const topic, queues = "Delayed", 2
	delivered := func(cl *remoting.Client, addr string) int64 {
		t.Helper()
		var sum int64
		for q := range int32(queues) {
			resp := clitest.Invoke(t, cl, addr, protocol.NewRequest(protocol.ReqGetMaxOffset,
				protocol.GetMaxOffsetRequestHeader{QueueRequestHeader: protocol.QueueRequestHeader{Topic: topic, QueueID: q}}.Encode(), nil))
			var h protocol.GetMaxOffsetResponseHeader
			if err := h.Decode(resp.ExtFields); err != nil {
				t.Fatal(err)
			}
			sum += h.Offset
		}
		return sum
	}
	sendDelayed := func(p *proc, cl *remoting.Client, body string) {
		t.Helper()
		send(t, p.invoker(t, cl), topic, body, map[string]string{protocol.PropertyDelayTimeLevel: "1"})
	}

	p, cl := startConf(t, bin, conf)
	createTopic(t, p.invoker(t, cl), topic, queues)
	const n = 600
	start := time.Now()
	for i := range n {
		sendDelayed(p, cl, fmt.Sprintf("d-%d", i))
	}
	t.Logf("%d delayed sends took %v", n, time.Since(start))
	// Kill as soon as the first deliveries are visible: the rest are due
	// over about as long as the sends took.
	var before int64
	deadline := time.Now().Add(30 * time.Second)
	for before = delivered(cl, p.addr); before == 0; before = delivered(cl, p.addr) {
		if time.Now().After(deadline) {
			t.Fatalf("no delayed message delivered within 30 s; stderr:\n%s", p.stderr)
		}
	}
	p.kill(t)
	_ = cl.Close()
	t.Logf("SIGKILL with at least %d of %d delivered", before, n)

	p, cl = startConf(t, bin, conf)
	// The schedule delivers a level in order: once a message sent after
	// the restart has been delivered, every earlier one has been handled.
	sendDelayed(p, cl, "sentinel")
	count := map[string]int{}
	deadline = time.Now().Add(60 * time.Second)
	for count["sentinel"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("sentinel not delivered within 60 s (%d stored); stderr:\n%s", delivered(cl, p.addr), p.stderr)
		}
		time.Sleep(50 * time.Millisecond) // the sentinel is due 2 s after its send
		count = realTopicBodies(t, p.invoker(t, cl), topic, queues)
	}
	if len(count) != n+1 {
		t.Errorf("%d distinct messages in %s, want %d and the sentinel", len(count), topic, n)
	}
	for i := range n {
		if k := count[fmt.Sprintf("d-%d", i)]; k != 1 {
			t.Errorf("d-%d stored %d times in its real topic, want once", i, k)
		}
	}
	p.stop(t)
}

// realTopicBodies reads every message of the topic's queues and counts
// them by body.
func realTopicBodies(t *testing.T, invoke func(*protocol.Command) *protocol.Command, topic string, queues int32) map[string]int {
	t.Helper()
	count := map[string]int{}
	for body, ms := range realTopicMessages(t, invoke, topic, queues) {
		count[body] = len(ms)
	}
	return count
}
