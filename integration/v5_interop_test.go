//go:build !race

// The official v2 client races inside itself under -race (and so does the
// v5 SDK's push consumer); scripts/test.sh runs this file in its second
// pass.

package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	rmq5 "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestV5InteropBothGenerations: one cluster for both generations. A
// message the v5 SDK sends is consumed by the official v2 client and by
// ours, with its tag, keys and properties; one the v2 client sends is
// received by the v5 SDK under its message id; the group's connections
// list the v5 client with its language and version.
func TestV5InteropBothGenerations(t *testing.T) {
	c := startV5(t)
	topic := "V5Interop"
	p5 := newV5Producer(t, c, []string{topic})
	for i := range 10 {
		m := &rmq5.Message{Topic: topic, Body: []byte(body(i))}
		m.SetTag("TagA")
		m.SetKeys(fmt.Sprintf("k%d", i))
		m.AddProperty("n", fmt.Sprint(i))
		v5Send(t, p5, m)
	}
	var mu sync.Mutex
	official := map[string]*primitive.MessageExt{}
	startListener(t, c, "interop-v2", topic, "TagA", func(m *primitive.MessageExt) consumer.ConsumeResult {
		mu.Lock()
		official[string(m.Body)] = m
		mu.Unlock()
		return consumer.ConsumeSuccess
	})
	ours := newRCCollector()
	rcConsumer(t, c, "interop-ours", topic, "TagA", ours.add)
	testwait.For(t, 30*time.Second, "both consumers got the v5 messages", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(official) == 10 && ours.len() == 10
	})
	mu.Lock()
	for i := range 10 {
		m, o := official[body(i)], ours.get(body(i))
		if m.GetTags() != "TagA" || m.GetKeys() != fmt.Sprintf("k%d", i) || m.GetProperty("n") != fmt.Sprint(i) {
			t.Errorf("official consumer got %s with tag %q keys %q n %q", body(i), m.GetTags(), m.GetKeys(), m.GetProperty("n"))
		}
		if o.Tags() != "TagA" || o.Properties["n"] != fmt.Sprint(i) {
			t.Errorf("our consumer got %s with tag %q n %q", body(i), o.Tags(), o.Properties["n"])
		}
	}
	mu.Unlock()

	back := "V5InteropBack"
	createTopic(t, c, 0, back, 2)
	p2 := newProducer(t, c)
	ids := map[string]bool{}
	for i := range 5 {
		m := primitive.NewMessage(back, []byte(body(i)))
		m.WithTag("TagB")
		r, err := p2.SendSync(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		ids[r.MsgID] = true
	}
	sc := newV5SimpleConsumer(t, c, "interop-v5", map[string]*rmq5.FilterExpression{back: rmq5.NewFilterExpression("TagB")}, 5*time.Second)
	got := v5Receive(t, sc, 5, 20*time.Second, 30*time.Second)
	if len(got) != 5 {
		t.Fatalf("the v5 consumer received %d of 5", len(got))
	}
	for _, mv := range got {
		if !ids[mv.GetMessageId()] || *mv.GetTag() != "TagB" {
			t.Errorf("v5 received %s (tag %v), not one the v2 producer sent", mv.GetMessageId(), mv.GetTag())
		}
		if err := sc.Ack(context.Background(), mv); err != nil {
			t.Fatal(err)
		}
	}

	info, err := c.Broker(0).Core().ConsumerConnections("interop-v5")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Connections) != 1 || info.Connections[0].Language != "GO" ||
		protocol.VersionName(info.Connections[0].Version) != "V5_1_4" {
		t.Fatalf("connections of the v5 group: %+v", info.Connections)
	}
}
