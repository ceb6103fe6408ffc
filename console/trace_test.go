package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/client/trace"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestMessageTraceResendToAGroupAndAllDeadLetters: a message's trace, as
// the official clients write it to RMQ_SYS_TRACE_TOPIC, is shown as a
// timeline; "resend to a group" has an online client consume it again;
// and every dead letter of a group goes back once the name is typed.
func TestMessageTraceResendToAGroupAndAllDeadLetters(t *testing.T) {
	e := start(t)
	api := newAPI(t, e.con)
	// (The broker keeps RMQ_SYS_TRACE_TOPIC itself.)
	if _, err := e.adm.CreateTopic(e.ctx, admin.TopicSpec{Topic: "Traced", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		t.Fatal(err)
	}
	sent, err := e.adm.SendMessage(e.ctx, admin.Send{Topic: "Traced", Keys: []string{"k1"}, Body: []byte("traced body")})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Minute).UnixMilli()
	f := func(fields ...any) string {
		s := make([]string, len(fields))
		for i, x := range fields {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, trace.FieldSeparator)
	}
	body := strings.Join([]string{
		f("Pub", t0, "DefaultRegion", "pg", "Traced", sent.MsgID, "", "k1", "127.0.0.1:10911", 11, 3, 0, sent.OffsetMsgID, "true", "10.0.0.1"),
		f("SubBefore", t0+20, "DefaultRegion", "cg", "req-1", sent.MsgID, 0, "k1", "10.0.0.2"),
		f("SubAfter", "req-1", sent.MsgID, 7, "false", "k1", 0, t0+27, "cg"),
	}, trace.RecordSeparator)
	if _, err := e.adm.SendMessage(e.ctx, admin.Send{Topic: trace.Topic, Keys: []string{sent.MsgID, sent.OffsetMsgID}, Body: []byte(body)}); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Trace []trace.Record `json:"trace"`
	}
	api.getJSON("/api/message?id="+sent.OffsetMsgID, &m)
	if len(m.Trace) != 3 || m.Trace[0].Type != trace.Pub || m.Trace[2].CostMs != 7 || m.Trace[2].ClientHost != "10.0.0.2" {
		t.Fatalf("trace: %+v", m.Trace)
	}
	code, page := api.get("/message?id=" + sent.OffsetMsgID)
	if code != http.StatusOK || !strings.Contains(page, `class="chart timeline"`) || strings.Count(page, `class="bar `) != 4 ||
		!strings.Contains(page, "bar failed") || !strings.Contains(page, "by pg from 10.0.0.1") {
		t.Fatalf("the trace timeline is not drawn:\n%s", page)
	}

	// Resend to a group: one of its online clients consumes it directly.
	var consumed atomic.Int64
	consume(t, e.c, "g-traced", "Traced", &consumed)
	var res actionResult
	testwait.For(t, time.Minute, "a resend to g-traced, once a client is online", func() bool {
		res = actionResult{}
		return api.postJSON("/api/message/resend", map[string]any{"id": sent.OffsetMsgID, "topic": "Traced", "group": "g-traced"}, &res) == http.StatusOK
	})
	if !strings.Contains(res.Notice, "CR_SUCCESS") {
		t.Fatalf("resend notice: %q", res.Notice)
	}

	// All dead letters, once confirmed.
	pulled, err := e.adm.Pull(e.ctx, queue.MessageQueue{Topic: "Traced", BrokerName: e.c.BrokerName(0), QueueID: 0}, 0, 1)
	if err != nil || len(pulled.Messages) != 1 {
		t.Fatalf("pull: %v %v", pulled, err)
	}
	if err := e.c.DeadLetter(e.ctx, 0, "g-traced", pulled.Messages[0]); err != nil {
		t.Fatal(err)
	}
	var dl struct {
		Rows  []struct{ OffsetMsgID string } `json:"deadLetters"`
		Total int64                          `json:"total"`
	}
	// The broker stores the dead letter as it answers; its queue shows it
	// once dispatched.
	testwait.For(t, time.Minute, "the dead letter listed", func() bool {
		dl.Rows, dl.Total = nil, 0
		api.getJSON("/api/dlq?group=g-traced", &dl)
		return dl.Total == 1 && len(dl.Rows) == 1
	})
	if code := api.postJSON("/api/dlq/resend", map[string]any{"group": "g-traced", "all": 1}, &res); code != http.StatusBadRequest {
		t.Fatalf("resend all unconfirmed: %d", code)
	}
	before := stored(t, e, "Traced")
	if code := api.postJSON("/api/dlq/resend", map[string]any{"group": "g-traced", "all": 1, "confirm": "g-traced"}, &res); code != http.StatusOK || !strings.Contains(res.Notice, "Re-sent 1 dead letter") {
		t.Fatalf("resend all: %d %+v %q", code, res.Error, res.Notice)
	}
	if after := stored(t, e, "Traced"); after != before+1 {
		t.Fatalf("Traced holds %d after resending all, %d before", after, before)
	}
}
