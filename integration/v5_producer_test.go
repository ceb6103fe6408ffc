package integration

import (
	"fmt"
	"testing"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
)

// TestV5ProducerNormal: the official RocketMQ 5 Go SDK, with its
// defaults (TLS, not verified), sends to a topic its first use creates;
// every message is stored with its body, tag, keys and properties, under
// the message id the SDK gave it.
func TestV5ProducerNormal(t *testing.T) {
	c := startV5(t)
	topic := "V5Normal"
	p := newV5Producer(t, c, []string{topic})
	ids := map[string]int{}
	for i := range 10 {
		m := &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprintf("body-%d", i))}
		m.SetTag("TagA")
		m.SetKeys(fmt.Sprintf("key-%d", i))
		m.AddProperty("n", fmt.Sprint(i))
		r := v5Send(t, p, m)
		ids[r.MessageID] = i
	}
	if len(ids) != 10 {
		t.Fatalf("%d distinct message ids for 10 sends", len(ids))
	}
	got := readTopic(t, c, 0, topic)
	if len(got) != 10 {
		t.Fatalf("stored %d messages, want 10", len(got))
	}
	for _, m := range got {
		i, ok := ids[m.UniqKey()]
		if !ok {
			t.Fatalf("stored message %s was not sent", m.UniqKey())
		}
		if string(m.Body) != fmt.Sprintf("body-%d", i) || m.Tags() != "TagA" ||
			m.Property("KEYS") != fmt.Sprintf("key-%d", i) || m.Property("n") != fmt.Sprint(i) {
			t.Errorf("message %d stored as %q tag %q keys %q n %q", i, m.Body, m.Tags(), m.Property("KEYS"), m.Property("n"))
		}
	}
}
