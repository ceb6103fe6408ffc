//go:build !race

// Built without -race: the official client's push consumer races with
// itself (see retry_test.go).

package integration

import (
	"context"
	"encoding/json"
	"github.com/runnelmq/runnel/internal/testwait"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// collected gathers what an official push consumer received, by MsgId.
type collected struct {
	mu  sync.Mutex
	got map[string]*primitive.MessageExt
}

func (c *collected) add(m *primitive.MessageExt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got[m.MsgId] = m
}

func (c *collected) snapshot() map[string]*primitive.MessageExt {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]*primitive.MessageExt, len(c.got))
	for k, v := range c.got {
		out[k] = v
	}
	return out
}

// TestDeadLettersWithTheOfficialClient: messages the official push
// consumer gives up on land in %DLQ%<group>, readable as RocketMQ 4.7+
// makes it: another official consumer reads them there, runnelctl dlq
// list shows them, and runnelctl dlq resend puts copies on the original
// topic that a fresh official consumer receives with the original bodies,
// tags, keys and user properties and none of the retry bookkeeping.
func TestDeadLettersWithTheOfficialClient(t *testing.T) {
	c := delayCluster(t, shortDelays)
	const topic, group = "DlqOfficialT", "g-dlq-official"
	createTopic(t, c, 0, topic, 2)
	createTopic(t, c, 0, "%RETRY%"+group, 1) // see TestRetryLater
	p := newProducer(t, c)
	type want struct{ body, tag, key, color string }
	sent := map[string]want{}
	for _, w := range []want{{"first", "TagA", "k-1", "red"}, {"second", "TagB", "k-2", "green"}, {"third", "TagA", "k-3", "blue"}} {
		msg := primitive.NewMessage(topic, []byte(w.body)).WithTag(w.tag).WithKeys([]string{w.key})
		msg.WithProperty("color", w.color)
		res, err := p.SendSync(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		sent[res.MsgID] = w
	}

	failing := startListener(t, c, group, topic, "", func(*primitive.MessageExt) consumer.ConsumeResult {
		return consumer.ConsumeRetryLater
	}, consumer.WithMaxReconsumeTimes(1))
	dlq := "%DLQ%" + group
	st := c.Broker(0).Store()
	testwait.For(t, 60*time.Second, "3 messages in "+dlq, func() bool { return st.MaxOffset(dlq, 0) == 3 })
	failing.shutdown()

	// Another group of the official client reads the dead letters.
	reader := &collected{got: map[string]*primitive.MessageExt{}}
	newPushConsumer(t, c, "g-dlq-reader", dlq, "", reader.add)
	testwait.For(t, 60*time.Second, "the dead letters read by an official consumer", func() bool { return len(reader.snapshot()) == 3 })
	for id, m := range reader.snapshot() {
		w, ok := sent[id]
		if !ok || string(m.Body) != w.body || m.GetTags() != w.tag || m.GetKeys() != w.key || m.GetProperty("color") != w.color ||
			m.GetProperty("RETRY_TOPIC") != topic {
			t.Errorf("dead letter %s read as %+v, sent %+v", id, m, w)
		}
	}

	ctl := mustRunnelctl(t, c.NamesrvAddr())
	var listed []struct {
		MsgID       string `json:"msgId"`
		OriginTopic string `json:"originTopic"`
	}
	if err := json.Unmarshal([]byte(ctl("dlq", "list", "--group", group, "-o", "json")), &listed); err != nil || len(listed) != 3 {
		t.Fatalf("dlq list: %v %+v", err, listed)
	}
	for _, l := range listed {
		if _, ok := sent[l.MsgID]; !ok || l.OriginTopic != topic {
			t.Errorf("dlq list row %+v", l)
		}
	}
	copies := map[string]want{}
	for _, line := range strings.Split(strings.TrimSpace(ctl("dlq", "resend", "--group", group, "--all", "--yes", "-o", "json")), "\n") {
		var row struct {
			Dead  string `json:"deadLetterMsgId"`
			MsgID string `json:"msgId"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("resend row %q: %v", line, err)
		}
		copies[row.MsgID] = sent[row.Dead]
	}
	if len(copies) != 3 {
		t.Fatalf("resend made %d copies, want 3", len(copies))
	}

	fresh := &collected{got: map[string]*primitive.MessageExt{}}
	newPushConsumer(t, c, "g-dlq-fresh", topic, "", fresh.add)
	testwait.For(t, 60*time.Second, "originals and copies for a fresh group", func() bool { return len(fresh.snapshot()) == 6 })
	got := fresh.snapshot()
	for id, w := range copies {
		m := got[id]
		if m == nil {
			t.Fatalf("copy %s not delivered", id)
		}
		if string(m.Body) != w.body || m.GetTags() != w.tag || m.GetKeys() != w.key || m.GetProperty("color") != w.color ||
			m.ReconsumeTimes != 0 || m.GetProperty("RETRY_TOPIC") != "" || m.GetProperty("ORIGIN_MESSAGE_ID") != "" {
			t.Errorf("copy %s: %+v, want %+v", id, m, w)
		}
	}
}
