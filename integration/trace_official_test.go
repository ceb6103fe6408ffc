//go:build !race

// Built without -race only: the official client's push consumer races with
// itself (see retry_test.go).

package integration

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/apache/rocketmq-client-go/v2/consumer"
)

// traceRow is a record of runnelctl message trace -o json.
type traceRow struct {
	Type       string `json:"type"`
	Time       int64  `json:"time"`
	Group      string `json:"group"`
	ClientHost string `json:"clientHost"`
	CostMs     int64  `json:"costMs"`
	Success    *bool  `json:"success"`
	Topic      string `json:"topic"`
	MsgID      string `json:"msgId"`
}

// TestMessageTraceOfOfficialClients: an official producer and push
// consumer with WithTrace write their records to the trace topic the
// broker created at start (the client never creates it and drops traces
// without a route); runnelctl message trace finds the produce and consume
// records by the message id, in JSON and text.
// tracedOnce: the official client's trace dispatcher makes its producer
// under one fixed instance name per process (INNER_TRACE_CLIENT_DEFAULT,
// internal/trace.go), so a second traced client against another name server
// joins the first one's instance and the official client panics. The test
// therefore runs once per test process (-count=N runs it once).
var tracedOnce atomic.Bool

func TestMessageTraceOfOfficialClients(t *testing.T) {
	if !tracedOnce.CompareAndSwap(false, true) {
		t.Skip("the official client's trace dispatcher works once per process (see tracedOnce)")
	}
	c := rcCluster(t)
	const topic = "Traced"
	createTopic(t, c, 0, topic, 1)
	ctl := runnelctl(t, c.NamesrvAddr())
	trace := &primitive.TraceConfig{NamesrvAddrs: []string{c.NamesrvAddr()}, GroupName: "trace-group"}

	p := newProducer(t, c, producer.WithGroupName("traced-pg"), producer.WithTrace(trace))
	res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("traced body")))
	if err != nil {
		t.Fatal(err)
	}
	id := res.MsgID
	got := newCollector()
	newPushConsumer(t, c, "traced-cg", topic, "*", got.add, consumer.WithTrace(trace))
	testwait.For(t, 30*time.Second, "the traced message consumed", func() bool { return got.len() == 1 })

	// The dispatchers send on their own tick: poll until both sides wrote.
	var rows []traceRow
	testwait.For(t, 30*time.Second, "produce and consume records of "+id, func() bool {
		out, stderr, err := ctl("message", "trace", "--id", id, "-o", "json")
		if err != nil {
			t.Fatalf("runnelctl message trace: %v\n%s", err, stderr)
		}
		rows = nil
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("trace json: %v\n%s", err, out)
		}
		types := map[string]bool{}
		for _, r := range rows {
			types[r.Type] = true
		}
		return types["Pub"] && types["SubBefore"] && types["SubAfter"]
	})
	for _, r := range rows {
		if r.MsgID != id {
			t.Fatalf("record of another message: %+v", r)
		}
		switch r.Type {
		case "Pub":
			if r.Group != "traced-pg" || r.Topic != topic || r.Success == nil || !*r.Success || r.ClientHost == "" || r.Time == 0 {
				t.Fatalf("produce record: %+v", r)
			}
		case "SubAfter":
			if r.Group != "traced-cg" || r.Success == nil || !*r.Success || r.ClientHost == "" {
				t.Fatalf("consume record: %+v", r)
			}
		}
	}
	text, _, err := ctl("message", "trace", "--id", id)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Pub", "SubBefore", "SubAfter", "traced-pg", "traced-cg", "success"} {
		if !strings.Contains(text, want) {
			t.Fatalf("text output lacks %q:\n%s", want, text)
		}
	}
	if _, stderr, err := ctl("message", "trace", "--id", "00000000000000000000000000000000"); err == nil || !strings.Contains(stderr, "no trace of message") {
		t.Fatalf("unknown id: err %v, stderr %q", err, stderr)
	}
}
