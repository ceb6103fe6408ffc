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

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

// TestOfficialPullConsumer: the official pull consumer sends its
// subscription in every pull (SUBSCRIPTION flag) with maxMsgNums 0; the
// broker filters by the request's tags and returns messages one by one.
func TestOfficialPullConsumer(t *testing.T) {
	c := cluster.Start(t)
	const topic = "PullTags"
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c)
	for i := range 20 {
		tag := string(rune('A' + i%2))
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", tag, i)))
		m.WithTag(tag)
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer([]string{c.NamesrvAddr()}),
		consumer.WithInstance(instance("pull")),
		consumer.WithGroupName("g-pull"),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "A"}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	defer pc.Shutdown()
	got := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < 10 && time.Now().Before(deadline) {
		cr, err := pc.Poll(context.Background(), time.Second)
		if err != nil {
			continue // poll timeout
		}
		for _, m := range cr.GetMsgList() {
			if m.GetTags() != "A" {
				t.Errorf("received %s with tag %q", m.Body, m.GetTags())
			}
			got[string(m.Body)] = true
		}
		pc.ACK(context.Background(), cr, consumer.ConsumeSuccess)
	}
	if len(got) != 10 {
		t.Fatalf("pull consumer received %d of 10 tag-A messages", len(got))
	}
}
