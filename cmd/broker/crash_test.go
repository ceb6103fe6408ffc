package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
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
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	// Level 1 is 2 s: long enough that every send is stored before the
	// first one comes due, so the deliveries are spread as the sends were.
	if err := os.WriteFile(conf, []byte("storePathRootDir="+filepath.Join(dir, "store")+
		"\nflushDiskType=SYNC_FLUSH\nmessageDelayLevel=2s 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() (*proc, *remoting.Client) {
		p := startProc(t, bin, "-c", conf, "--listen", "127.0.0.1:0", "--log-level", "warn")
		cl := remoting.NewClient(remoting.DefaultClientConfig())
		t.Cleanup(func() { _ = cl.Close() })
		return p, cl
	}
	invoke := func(cl *remoting.Client, addr string, req *protocol.Command) *protocol.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := cl.Invoke(ctx, addr, req)
		if err != nil {
			t.Fatalf("%s: %v", protocol.RequestCodeName(req.Code), err)
		}
		return resp
	}
	const topic, queues = "Delayed", 2
	delivered := func(cl *remoting.Client, addr string) int64 {
		t.Helper()
		var sum int64
		for q := range int32(queues) {
			resp := invoke(cl, addr, protocol.NewRequest(protocol.ReqGetMaxOffset,
				protocol.GetMaxOffsetRequestHeader{QueueRequestHeader: protocol.QueueRequestHeader{Topic: topic, QueueID: q}}.Encode(), nil))
			var h protocol.GetMaxOffsetResponseHeader
			if err := h.Decode(resp.ExtFields); err != nil {
				t.Fatal(err)
			}
			sum += h.Offset
		}
		return sum
	}
	sendDelayed := func(cl *remoting.Client, addr, body string) {
		t.Helper()
		hdr := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli(),
			Properties: message.MarshalProperties(map[string]string{protocol.PropertyDelayTimeLevel: "1"})}
		resp := invoke(cl, addr, protocol.NewRequest(protocol.ReqSendMessage, hdr.Encode(), []byte(body)))
		if resp.Code != protocol.RespSuccess {
			t.Fatalf("send %s: code %d %s", body, resp.Code, resp.Remark)
		}
	}

	p, cl := run()
	resp := invoke(cl, p.addr, protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(), nil))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic: %d %s", resp.Code, resp.Remark)
	}
	const n = 600
	start := time.Now()
	for i := range n {
		sendDelayed(cl, p.addr, fmt.Sprintf("d-%d", i))
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
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	_ = cl.Close()
	t.Logf("SIGKILL with at least %d of %d delivered", before, n)

	p, cl = run()
	// The schedule delivers a level in order: once a message sent after
	// the restart has been delivered, every earlier one has been handled.
	sendDelayed(cl, p.addr, "sentinel")
	count := map[string]int{}
	deadline = time.Now().Add(60 * time.Second)
	for count["sentinel"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("sentinel not delivered within 60 s (%d stored); stderr:\n%s", delivered(cl, p.addr), p.stderr)
		}
		time.Sleep(50 * time.Millisecond) // the sentinel is due 2 s after its send
		count = realTopicBodies(t, func(req *protocol.Command) *protocol.Command { return invoke(cl, p.addr, req) }, topic, queues)
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
				count[string(m.Body)]++
			}
			var ph protocol.PullMessageResponseHeader
			if err := ph.Decode(resp.ExtFields); err != nil {
				t.Fatal(err)
			}
			off = ph.NextBeginOffset
		}
	}
	return count
}
