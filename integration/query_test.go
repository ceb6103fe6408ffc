package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/client/admin"
)

// TestMessageQuery: messages sent by the official producer are found by
// the ids its SendResult reports (offsetMsgId through VIEW_MESSAGE_BY_ID,
// the client id through QUERY_MESSAGE by UNIQ_KEY) and by their keys
// within a store-time window (QUERY_MESSAGE), using Runnel's admin API (the
// official Go client has no message query API).
func TestMessageQuery(t *testing.T) {
	c := rcCluster(t)
	const topic = "QueryT"
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c)
	before := time.Now().Add(-time.Second)
	var sent []*primitive.SendResult
	for i := range 3 {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("order-%d", i)))
		m.WithKeys([]string{fmt.Sprintf("order-%d", i), "all-orders"})
		m.WithTag("paid")
		res, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, res)
	}
	after := time.Now().Add(time.Second)

	a := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for i, res := range sent {
		want := fmt.Sprintf("order-%d", i)
		m, err := a.QueryMessageByID(ctx, res.OffsetMsgID, "")
		if err != nil {
			t.Fatalf("by offsetMsgId %s: %v", res.OffsetMsgID, err)
		}
		if string(m.Body) != want || m.Topic != topic || m.Tags() != "paid" || m.UniqKey() != res.MsgID {
			t.Fatalf("by offsetMsgId: %q on %s, tags %q, uniq %q", m.Body, m.Topic, m.Tags(), m.UniqKey())
		}
		m, err = a.QueryMessageByID(ctx, res.MsgID, topic)
		if err != nil {
			t.Fatalf("by client id %s: %v", res.MsgID, err)
		}
		if string(m.Body) != want || m.OffsetMsgID != res.OffsetMsgID {
			t.Fatalf("by client id: %q at %s, want %q at %s", m.Body, m.OffsetMsgID, want, res.OffsetMsgID)
		}
		ms, err := a.QueryMessageByKey(ctx, admin.KeyQuery{Topic: topic, Key: want, Begin: before, End: after})
		if err != nil || len(ms) != 1 || string(ms[0].Body) != want {
			t.Fatalf("by key %s: %d messages, %v", want, len(ms), err)
		}
	}
	ms, err := a.QueryMessageByKey(ctx, admin.KeyQuery{Topic: topic, Key: "all-orders"})
	if err != nil || len(ms) != 3 {
		t.Fatalf("by shared key: %d messages, %v", len(ms), err)
	}
	// Outside the time window nothing matches.
	ms, err = a.QueryMessageByKey(ctx, admin.KeyQuery{Topic: topic, Key: "all-orders", Begin: after, End: after.Add(time.Hour)})
	if len(ms) != 0 || (err != nil && !errors.Is(err, admin.ErrNotFound)) {
		t.Fatalf("outside the window: %d messages, %v", len(ms), err)
	}
	if _, err := a.QueryMessageByID(ctx, "0123456789ABCDEF0123456789ABCDEF", topic); err == nil {
		t.Fatal("an unknown id was found")
	}
}
