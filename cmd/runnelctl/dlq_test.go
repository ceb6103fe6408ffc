package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// dlqDelayLevels makes a retry due within a second, so that a message
// reaches the dead-letter topic quickly.
const dlqDelayLevels = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"

// listener is a push consumer of ours whose listener answers with result
// and records what it was given.
type listener struct {
	mu   sync.Mutex
	got  map[string]*client.MessageExt // by MsgID, the last delivery
	cons *client.PushConsumer
}

func (l *listener) msgs() map[string]*client.MessageExt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.got)
}

func startListener(t *testing.T, namesrv, group, topic string, result client.ConsumeResult, maxReconsume int) *listener {
	t.Helper()
	l := &listener{got: map[string]*client.MessageExt{}}
	cfg := clitest.ConsumerConfig(namesrv, "runnelctl-dlq-test-"+group, group)
	cfg.MaxReconsumeTimes = maxReconsume
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, m := range msgs {
			l.got[m.MsgID] = m
		}
		return result
	}
	l.cons = clitest.StartConsumer(t, cfg, topic, "*")
	return l
}

// dlqSent is one message the test sent and expects back.
type dlqSent struct {
	body, tag, key, color string
	res                   client.SendResult
}

// TestDLQListAndResend: messages a group always fails land in its
// dead-letter topic; dlq list shows them with their origin, dlq resend
// puts copies back on the original topic, where a fresh group gets them
// with their bodies, tags, keys and user properties and without the retry
// bookkeeping; and neither command leaves a consumer offset on the
// dead-letter topic.
func TestDLQListAndResend(t *testing.T) {
	cl, env := onCluster(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.MessageDelayLevel = dlqDelayLevels }))
	const topic, group = "dlq-orders", "dlq-billing"
	ctx := context.Background()
	okRun(t, env, "", "topic", "create", topic, "--queues", "2")

	// Nothing dead yet: no DLQ topic, an empty answer, exit 0.
	if r := okRun(t, env, "", "dlq", "list", "--group", group, "-o", "json"); strings.TrimSpace(r.stdout) != "[]" || !strings.Contains(r.stderr, "no dead letters") {
		t.Fatalf("dlq list before any dead letter: %+v", r)
	}
	assertFailed(t, runCLI(t, env, "", "dlq", "resend", "--group", group, "--id", "AC11000100A418B4AAC2615FB1B80000"), "has no dead letters")
	// A dead-letter topic made write-only, as brokers before RocketMQ 4.7
	// made them, is explained, not shown as empty.
	okRun(t, env, "", "topic", "create", "%DLQ%dlq-old", "--queues", "1", "--perm", "W")
	assertFailed(t, runCLI(t, env, "", "dlq", "list", "--group", "dlq-old"), "topic %DLQ%dlq-old has no readable queue: brokers before RocketMQ 4.7")
	assertFailed(t, runCLI(t, env, "", "dlq", "resend", "--group", "dlq-old", "--all"), "update-perm '%DLQ%dlq-old' --perm RW")

	pcfg := client.DefaultProducerConfig()
	pcfg.Client.NameServerAddrs = []string{cl.NamesrvAddr()}
	pcfg.Client.InstanceName = "runnelctl-dlq-test-producer"
	pcfg.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := client.NewProducer(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	sent := []*dlqSent{
		{body: "order one", tag: "created", key: "order-1", color: "red"},
		{body: "order two", tag: "paid", key: "order-2", color: "green"},
		{body: `{"order":3}`, tag: "created", key: "order-3", color: "blue"},
	}
	byID := map[string]*dlqSent{}
	for _, s := range sent {
		s.res, err = p.Send(ctx, &client.Message{Topic: topic, Body: []byte(s.body), Tags: s.tag, Keys: []string{s.key},
			Properties: map[string]string{"color": s.color}})
		if err != nil {
			t.Fatal(err)
		}
		byID[s.res.MsgID] = s
	}

	// A group that always fails, with one reconsume: each message is
	// delivered twice, then dead.
	failing := startListener(t, cl.NamesrvAddr(), group, topic, client.ConsumeRetryLater, 1)
	var dead []deadLetterView
	testwait.For(t, 60*time.Second, "3 dead letters in dlq list", func() bool {
		r := runCLI(t, env, "", "dlq", "list", "--group", group, "-o", "json")
		dead = nil
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &dead) == nil && len(dead) == 3
	})
	_ = failing.cons.Shutdown(ctx)
	for _, d := range dead {
		s := byID[d.MsgID]
		if s == nil {
			t.Fatalf("dead letter %+v has a msg id no sent message has", d)
		}
		stored, err := time.Parse(time.RFC3339, d.StoreTime)
		if err != nil || stored.UnixMilli() != d.StoreTimestamp {
			t.Errorf("store time %q (%v), timestamp %d", d.StoreTime, err, d.StoreTimestamp)
		}
		if d.OriginTopic != topic || d.OriginMsgID != s.res.OffsetMsgID || d.ReconsumeTimes != 2 ||
			d.Tags != s.tag || !slices.Equal(d.Keys, []string{s.key}) || d.Body == nil || *d.Body != s.body ||
			d.Properties["color"] != s.color || d.OffsetMsgID == "" || d.OffsetMsgID == s.res.OffsetMsgID {
			t.Errorf("dead letter %+v, sent %+v", d, s)
		}
	}

	// The table: a header and one row per dead letter; --max cuts it and
	// says so.
	r := okRun(t, env, "", "dlq", "list", "--group", group)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "MSG ID") || !strings.Contains(lines[0], "ORIGINAL TOPIC") {
		t.Fatalf("dlq list table:\n%s", r.stdout)
	}
	for _, d := range dead {
		if !strings.Contains(r.stdout, d.MsgID+"  "+d.OffsetMsgID) || !strings.Contains(r.stdout, d.OriginMsgID) {
			t.Errorf("table lacks %s / %s:\n%s", d.MsgID, d.OffsetMsgID, r.stdout)
		}
	}
	r = okRun(t, env, "", "dlq", "list", "--group", group, "--max", "2", "-o", "json")
	var two []deadLetterView
	if err := json.Unmarshal([]byte(r.stdout), &two); err != nil || len(two) != 2 || !strings.Contains(r.stderr, "showing 2 of 3 dead letters") {
		t.Fatalf("--max 2: %v %d, stderr %q", err, len(two), r.stderr)
	}

	// Bad requests fail before anything is sent.
	assertFailed(t, runCLI(t, env, "", "dlq", "resend", "--group", group), "--id ID (repeatable) or --all")
	assertFailed(t, runCLI(t, env, "", "dlq", "resend", "--group", group, "--all", "--id", dead[0].MsgID), "exclude each other")
	assertFailed(t, runCLI(t, env, "", "dlq", "resend", "--group", group, "--id", dead[0].MsgID+",0123456789ABCDEF0123456789ABCDEF"),
		"no dead letter with id 0123456789ABCDEF0123456789ABCDEF in %DLQ%dlq-billing")
	assertFailed(t, runCLI(t, env, "", "dlq", "list"), "needs --group")
	// On a terminal it asks; "n" aborts.
	old := isTerminal
	isTerminal = func(any) bool { return true }
	r = runCLI(t, env, "n\n", "dlq", "resend", "--group", group, "--all")
	isTerminal = old
	if r.code != 1 || !strings.Contains(r.stderr, "Re-send 3 dead letters of group dlq-billing to dlq-orders (3)?") || !strings.Contains(r.stderr, "aborted") || r.stdout != "" {
		t.Fatalf("resend answered no: %+v", r)
	}

	// --all --yes: one JSON line per copy with its new ids, a summary.
	r = okRun(t, env, "", "dlq", "resend", "--group", group, "--all", "--yes", "-o", "json")
	if !strings.HasPrefix(r.stderr, "re-sent 3 dead letters of group dlq-billing to 1 topic in ") {
		t.Fatalf("resend summary: %q", r.stderr)
	}
	copies := map[string]*dlqSent{} // by the copy's new msg id
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row resentRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("resend row %q: %v", line, err)
		}
		s := byID[row.DeadMsgID]
		if s == nil || row.Topic != topic || row.MsgID == "" || row.MsgID == row.DeadMsgID || row.OffsetMsgID == "" {
			t.Fatalf("resend row %+v", row)
		}
		copies[row.MsgID] = s
	}
	if len(copies) != 3 {
		t.Fatalf("%d distinct copies, want 3:\n%s", len(copies), r.stdout)
	}

	// A fresh group reads the topic from the start: the 3 originals and
	// the 3 copies, each copy as sent, without the bookkeeping.
	fresh := startListener(t, cl.NamesrvAddr(), "dlq-fresh", topic, client.ConsumeSuccess, -1)
	testwait.For(t, 60*time.Second, "6 messages for the fresh group", func() bool { return len(fresh.msgs()) == 6 })
	got := fresh.msgs()
	for id, s := range copies {
		m := got[id]
		if m == nil {
			t.Fatalf("copy %s not delivered; got %d messages", id, len(got))
		}
		if m.Topic != topic || string(m.Body) != s.body || m.Tags() != s.tag || !slices.Equal(m.Keys(), []string{s.key}) ||
			m.Property("color") != s.color || m.ReconsumeTimes != 0 {
			t.Errorf("copy %s: %+v, want %+v", id, m.MessageExt, s)
		}
		for _, k := range []string{"RETRY_TOPIC", "ORIGIN_MESSAGE_ID", "RECONSUME_TIME", "MAX_RECONSUME_TIMES", "REAL_TOPIC", "DELAY"} {
			if v, ok := m.Properties[k]; ok {
				t.Errorf("copy %s keeps %s=%s", id, k, v)
			}
		}
	}

	// The dead letters stay, and no group holds offsets on the DLQ: the
	// commands read it without committing.
	if r := okRun(t, env, "", "dlq", "list", "--group", group, "-o", "json"); json.Unmarshal([]byte(r.stdout), &dead) != nil || len(dead) != 3 {
		t.Fatalf("dead letters after resend: %s", r.stdout)
	}
	adm := cl.Admin(t)
	if groups, err := adm.TopicConsumers(ctx, admin.DLQTopic(group)); err != nil || len(groups) != 0 {
		t.Fatalf("groups with offsets on the DLQ: %v %v", groups, err)
	}

	// One by id: the OFFSET MSG ID picks exactly one dead letter.
	r = okRun(t, env, "", "dlq", "resend", "--group", group, "--id", strings.ToLower(dead[0].OffsetMsgID))
	if n := strings.Count(strings.TrimSpace(r.stdout), "\n"); n != 1 || !strings.Contains(r.stdout, "NEW MSG ID") || !strings.HasPrefix(r.stderr, "re-sent 1 dead letter of group") {
		t.Fatalf("resend --id: %+v", r)
	}

	// The DLQ is writable too: a message sent there by hand has no origin,
	// and resend refuses before sending anything.
	if _, err := p.Send(ctx, &client.Message{Topic: admin.DLQTopic(group), Body: []byte("stray")}); err != nil {
		t.Fatal(err)
	}
	stored := func() (n int64) {
		stats, err := adm.TopicStats(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stats {
			n += s.MaxOffset
		}
		return n
	}
	before := stored()
	assertFailed(t, runCLI(t, env, "", "dlq", "resend", "--group", group, "--all", "--yes"), "has no RETRY_TOPIC property, so its original topic is unknown; nothing re-sent")
	if after := stored(); after != before {
		t.Fatalf("a refused resend stored %d messages on %s", after-before, topic)
	}
}
