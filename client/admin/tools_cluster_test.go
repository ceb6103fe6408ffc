package admin_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The tool reads and writes of the admin client (SendMessage, Pull,
// ScanQueue, QueueOffsetAt, TopicConfigs, DeadLetters, PlanResend and
// Resend), over the wire against an in-process cluster. (External test
// package: integration/cluster starts the console, which imports admin.)

func startAdmin(t *testing.T, c *cluster.Cluster) *admin.Admin {
	t.Helper()
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = c.NamesrvAddrs()
	a, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSendPullAndSearchOverTheWire(t *testing.T) {
	c := cluster.Start(t)
	a := startAdmin(t, c)
	ctx := ctxT(t)
	order := true
	if _, err := a.CreateTopic(ctx, admin.TopicSpec{Topic: "ToolT", ReadQueueNums: 2, WriteQueueNums: 2, Order: &order}); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	var sent []*admin.SendResult
	for i := range 6 {
		res, err := a.SendMessage(ctx, admin.Send{Topic: "ToolT", Tags: "TagA", Keys: []string{fmt.Sprintf("k-%d", i), "shared"},
			Properties: map[string]string{"color": "red"}, Body: []byte(fmt.Sprintf("body-%d", i)), Flag: 7})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, res)
	}
	// The sends go round the writable queues in turn.
	perQueue := map[int32]int{}
	for _, r := range sent {
		perQueue[r.QueueID]++
		if r.Broker != c.BrokerName(0) || len(r.MsgID) != 32 || len(r.OffsetMsgID) != 32 {
			t.Fatalf("send result %+v", r)
		}
	}
	if perQueue[0] != 3 || perQueue[1] != 3 {
		t.Fatalf("sends per queue %v, want 3 and 3", perQueue)
	}
	// A pull of queue 0 returns its three messages with everything sent.
	mq := queue.MessageQueue{Topic: "ToolT", BrokerName: c.BrokerName(0), QueueID: 0}
	res, err := a.Pull(ctx, mq, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 3 || res.Next != 3 || res.Max != 3 || res.Min != 0 {
		t.Fatalf("pull: %d messages, next %d, min %d, max %d", len(res.Messages), res.Next, res.Min, res.Max)
	}
	for _, m := range res.Messages {
		if m.Tags() != "TagA" || m.Property("color") != "red" || m.Flag != 7 || !slices.Contains(m.Keys(), "shared") ||
			!strings.HasPrefix(string(m.Body), "body-") || m.MsgID == m.OffsetMsgID {
			t.Fatalf("pulled %+v", m)
		}
	}
	// Past the end: nothing, and the bounds.
	if res, err := a.Pull(ctx, mq, 3, 10); err != nil || len(res.Messages) != 0 || res.Max != 3 {
		t.Fatalf("pull at the end: %+v, %v", res, err)
	}
	// The tool pulls committed nothing and left no group online.
	rows, err := a.ConsumerProgress(ctx, admin.ToolsConsumerGroup, "ToolT")
	if err != nil && !errors.Is(err, admin.ErrNotFound) {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.ConsumerOffset > 0 {
			t.Fatalf("the tools group committed after pulls: %+v", rows)
		}
	}
	// ScanQueue stops where asked.
	var scanned []int64
	if err := a.ScanQueue(ctx, mq, 1, 3, func(m *protocol.MessageExt) bool { scanned = append(scanned, m.QueueOffset); return true }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scanned, []int64{1, 2}) {
		t.Fatalf("scanned offsets %v, want [1 2]", scanned)
	}
	// By time: everything is after before, nothing after now.
	if off, err := a.QueueOffsetAt(ctx, mq, before); err != nil || off != 0 {
		t.Fatalf("offset at %v: %d, %v", before, off, err)
	}
	if off, err := a.QueueOffsetAt(ctx, mq, time.Now().Add(time.Hour)); err != nil || off != 3 {
		t.Fatalf("offset an hour ahead: %d, %v", off, err)
	}
	// The id a send reports finds the message.
	m, err := a.QueryMessageByID(ctx, sent[4].MsgID, "ToolT")
	if err != nil || string(m.Body) != "body-4" {
		t.Fatalf("query by id %s: %v %v", sent[4].MsgID, m, err)
	}
	// The whole topic table comes in one request, order flag and all.
	tcs, err := a.TopicConfigs(ctx, admin.Node{Name: c.BrokerName(0), Addr: c.BrokerAddr(0)})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := tcs["ToolT"]; !ok || tc.ReadQueueNums != 2 || tc.Perm != 6 || !tc.Order || tc.TopicName != "ToolT" {
		t.Fatalf("topic configs: ToolT %+v (%v)", tc, ok)
	}
	// Refusals name the problem.
	if _, err := a.SendMessage(ctx, admin.Send{Topic: "ToolT", Properties: map[string]string{"UNIQ_KEY": "x"}}); !errors.Is(err, admin.ErrBadArgument) {
		t.Fatalf("send with UNIQ_KEY: %v", err)
	}
	if _, err := a.SendMessage(ctx, admin.Send{Topic: "NoSuchTopic"}); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("send to a missing topic: %v", err)
	}
}

func TestDeadLettersReadAndResentOverTheWire(t *testing.T) {
	c := cluster.Start(t)
	a := startAdmin(t, c)
	ctx := ctxT(t)
	if _, err := a.CreateTopic(ctx, admin.TopicSpec{Topic: "DlqT", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		t.Fatal(err)
	}
	const group = "g-dlq"
	if _, _, err := a.DeadLetters(ctx, group, 10); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("dead letters of a group without any: %v", err)
	}
	if p, err := a.PlanResend(ctx, group, nil, true); err != nil || p.Count != 0 {
		t.Fatalf("plan all of none: %+v, %v", p, err)
	}
	for i := range 3 {
		if _, err := a.SendMessage(ctx, admin.Send{Topic: "DlqT", Tags: "T", Keys: []string{fmt.Sprintf("dk-%d", i)},
			Properties: map[string]string{"color": "blue"}, Body: []byte(fmt.Sprintf("dead-%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	mq := queue.MessageQueue{Topic: "DlqT", BrokerName: c.BrokerName(0), QueueID: 0}
	res, err := a.Pull(ctx, mq, 0, 10)
	if err != nil || len(res.Messages) != 3 {
		t.Fatalf("pull: %v %v", res, err)
	}
	for _, m := range res.Messages {
		if err := c.DeadLetter(ctx, 0, group, m); err != nil {
			t.Fatal(err)
		}
	}
	// The broker stores each dead letter as it answers; the queue shows
	// them once dispatched.
	var dead []*protocol.MessageExt
	var total int64
	testwait.For(t, time.Minute, "3 dead letters", func() bool {
		dead, total, err = a.DeadLetters(ctx, group, 2)
		return err == nil && total == 3 && len(dead) == 2
	})
	if dead[0].Property(protocol.PropertyRetryTopic) != "DlqT" || string(dead[0].Body) != "dead-0" {
		t.Fatalf("dead letter %+v", dead[0])
	}
	// An unknown id plans nothing, and says which.
	if _, err := a.PlanResend(ctx, group, []string{dead[0].MsgID, "00000000000000000000000000000000"}, false); !errors.Is(err, admin.ErrNotFound) ||
		!strings.Contains(err.Error(), "00000000000000000000000000000000") {
		t.Fatalf("plan with an unknown id: %v", err)
	}
	// One by its offsetMsgId, in lower case.
	p, err := a.PlanResend(ctx, group, []string{strings.ToLower(dead[1].OffsetMsgID)}, false)
	if err != nil || p.Count != 1 || p.Destinations() != "DlqT (1)" {
		t.Fatalf("plan one: %+v, %v", p, err)
	}
	var resent []admin.Resent
	n, err := a.Resend(ctx, p, func(r admin.Resent) error { resent = append(resent, r); return nil })
	if err != nil || n != 1 || len(resent) != 1 || resent[0].DeadOffsetMsgID != dead[1].OffsetMsgID || resent[0].Topic != "DlqT" {
		t.Fatalf("resend one: %d %+v %v", n, resent, err)
	}
	copyMsg, err := a.QueryMessageByID(ctx, resent[0].MsgID, "DlqT")
	if err != nil {
		t.Fatal(err)
	}
	if string(copyMsg.Body) != "dead-1" || copyMsg.Tags() != "T" || copyMsg.Property("color") != "blue" ||
		!slices.Contains(copyMsg.Keys(), "dk-1") || copyMsg.Property(protocol.PropertyRetryTopic) != "" ||
		copyMsg.MsgID == dead[1].MsgID {
		t.Fatalf("the copy: %+v", copyMsg)
	}
	// All of them.
	p, err = a.PlanResend(ctx, group, nil, true)
	if err != nil || p.Count != 3 {
		t.Fatalf("plan all: %+v, %v", p, err)
	}
	if n, err := a.Resend(ctx, p, nil); err != nil || n != 3 {
		t.Fatalf("resend all: %d, %v", n, err)
	}
	stats, err := a.TopicStats(ctx, "DlqT")
	if err != nil || stats[0].MaxOffset != 3+1+3 {
		t.Fatalf("DlqT after the re-sends: %+v, %v", stats, err)
	}
}
