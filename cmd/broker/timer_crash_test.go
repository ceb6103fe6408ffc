package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
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
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, []byte("storePathRootDir="+filepath.Join(dir, "store")+"\nflushDiskType=SYNC_FLUSH\n"), 0o644); err != nil {
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
	const topic, queues = "Timed", 2
	// Bodies are "name@dueMs".
	sendTimer := func(cl *remoting.Client, addr, name string, due time.Time) {
		t.Helper()
		ms := strconv.FormatInt(due.UnixMilli(), 10)
		hdr := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli(),
			Properties: message.MarshalProperties(map[string]string{protocol.PropertyTimerDeliverMS: ms})}
		resp := invoke(cl, addr, protocol.NewRequest(protocol.ReqSendMessage, hdr.Encode(), []byte(name+"@"+ms)))
		if resp.Code != protocol.RespSuccess {
			t.Fatalf("send %s: code %d %s", name, resp.Code, resp.Remark)
		}
	}

	p, cl := run()
	resp := invoke(cl, p.addr, protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(), nil))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic: %d %s", resp.Code, resp.Remark)
	}
	const n, late = 600, 20
	start := time.Now()
	// Due 2 s after each send, so the deliveries are spread as the sends
	// were and the kill lands among them.
	for i := range n {
		sendTimer(cl, p.addr, fmt.Sprintf("d-%d", i), time.Now().Add(2*time.Second))
	}
	lateDue := time.Now().Add(12 * time.Second)
	for i := range late {
		sendTimer(cl, p.addr, fmt.Sprintf("late-%d", i), lateDue)
	}
	t.Logf("%d timer sends took %v", n+late, time.Since(start))
	read := func() map[string][]*protocol.MessageExt {
		return realTopicMessages(t, func(req *protocol.Command) *protocol.Command { return invoke(cl, p.addr, req) }, topic, queues)
	}
	deadline := time.Now().Add(30 * time.Second)
	before := 0
	for ; before == 0; before = len(read()) {
		if time.Now().After(deadline) {
			t.Fatalf("no timer message delivered within 30 s; stderr:\n%s", p.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	_ = cl.Close()
	t.Logf("SIGKILL with at least %d of %d delivered", before, n+late)

	p, cl = run()
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
