//go:build !race

// These tests drive the official client's consumers, which report data races
// inside themselves under -race (their rebalance against their own offset
// store and pull paths). They run in the test command's race-free pass, so a
// race of theirs cannot fail CI for a reason that is not ours.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

func TestSmokeSendAndConsume(t *testing.T) {
	c := cluster.Start(t)
	createTopic(t, c, 0, "Smoke", 4)
	p := newProducer(t, c)
	const n = 20
	for i := range n {
		m := primitive.NewMessage("Smoke", []byte(fmt.Sprintf("m%d", i)))
		m.WithTag("TagA")
		m.WithKeys([]string{fmt.Sprintf("k%d", i)})
		res, err := p.SendSync(context.Background(), m)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if res.Status != primitive.SendOK {
			t.Fatalf("send %d: status %v", i, res.Status)
		}
	}
	got := newCollector()
	newPushConsumer(t, c, "g-smoke", "Smoke", "*", got.add)
	testwait.For(t, 30*time.Second, "all messages", func() bool { return got.len() == n })
	m := got.get("m7")
	if m.GetTags() != "TagA" || m.GetKeys() != "k7" {
		t.Errorf("m7: tags %q keys %q", m.GetTags(), m.GetKeys())
	}
}
