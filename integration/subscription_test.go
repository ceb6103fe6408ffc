//go:build !race

// What a subscription selects, filtered by the broker: tags, SQL92, and the
// official pull consumer's subscription in every pull. These tests drive
// the official client's consumers, which race inside themselves (see
// consumer_test.go).

package integration

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/internal/testwait"
)

// startTagged starts a cluster with topic (2 queues) holding n messages,
// message i tagged with the i%tags-th letter from A and its body
// "<tag>-<i>".
func startTagged(t *testing.T, topic string, n, tags int) *cluster.Cluster {
	t.Helper()
	c := cluster.Start(t)
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c)
	for i := range n {
		tag := string(rune('A' + i%tags))
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", tag, i)))
		m.WithTag(tag)
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestTagSubscription: a subscription "A || C" receives exactly the
// messages tagged A and C, and the broker filtered them: the official
// client filters by tag again on its side, so only the broker's count of
// messages its pull answers carried shows that B and D never left it.
func TestTagSubscription(t *testing.T) {
	const topic = "Tags"
	c := startTagged(t, topic, 40, 4)
	got := newCollector()
	newPushConsumer(t, c, "g-tags", topic, "A || C", got.add)
	testwait.For(t, 20*time.Second, "20 messages", func() bool { return got.len() == 20 })
	waitCommittedToEnd(t, c, "g-tags", topic, 2)
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.msgs) != 20 {
		t.Errorf("received %d messages, want 20", len(got.msgs))
	}
	for body, m := range got.msgs {
		if tag := m.GetTags(); tag != "A" && tag != "C" {
			t.Errorf("received %s with tag %q", body, tag)
		}
	}
	if n := c.Broker(0).MessagesPulled("g-tags"); n != 20 {
		t.Errorf("the broker's pull answers carried %d messages, want the 20 tagged A or C", n)
	}
}

// TestOfficialPullConsumer: the official pull consumer sends its
// subscription in every pull (SUBSCRIPTION flag) with maxMsgNums 0; the
// broker filters by the request's tags and returns messages one by one.
func TestOfficialPullConsumer(t *testing.T) {
	const topic = "PullTags"
	c := startTagged(t, topic, 20, 2)
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer([]string{c.NamesrvAddr()}),
		consumer.WithInstance(official.Instance("pull")),
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

// The official push consumer with a SQL92 selector gets exactly the
// messages its expression matches, filtered by the broker: the broker's
// pull answers carry no others (the client does not evaluate SQL92).
func TestOfficialSQL92Subscription(t *testing.T) {
	c := cluster.Start(t)
	const topic = "Sql92"
	createTopic(t, c, 0, topic, 1)
	p := newProducer(t, c)
	want := map[string]bool{}
	for i := range 40 {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("m%d", i)))
		m.WithProperty("n", strconv.Itoa(i))
		switch i % 3 {
		case 0:
			m.WithProperty("color", "red")
		case 1:
			m.WithProperty("color", "blue")
		}
		m.WithTag([]string{"A", "B"}[i%2])
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		// i%3 == 2 has no color: unknown, so only the IS NULL branch matches.
		if i >= 10 && (i%3 == 0 || i%3 == 2) && i%2 == 0 {
			want[fmt.Sprintf("m%d", i)] = true
		}
	}
	got := newCollector()
	newPushConsumer(t, c, "g-sql92", topic, "*", got.add)
	// A second group subscribes with SQL92.
	sqlGot := newCollector()
	startSelected(t, c, "g-sql92b", topic, consumer.MessageSelector{Type: consumer.SQL92,
		Expression: "n >= 10 AND (color = 'red' OR color IS NULL) AND TAGS = 'A'"}, accept(sqlGot.add))
	testwait.For(t, 20*time.Second, "all 40 to the TAG group", func() bool { return got.len() == 40 })
	testwait.For(t, 20*time.Second, fmt.Sprintf("%d to the SQL92 group", len(want)), func() bool { return sqlGot.len() == len(want) })
	// Both groups' pulls are held at the queue's end: the SQL92 group's
	// pulls have passed every message, so its count below is final.
	testwait.For(t, 20*time.Second, "both groups' pulls held at the end", func() bool {
		held := c.Broker(0).Core().HeldOffsets(topic, 0)
		return len(held) == 2 && held[0] == 40 && held[1] == 40
	})
	sqlGot.mu.Lock()
	defer sqlGot.mu.Unlock()
	for body := range sqlGot.msgs {
		if !want[body] {
			t.Errorf("SQL92 group received %s", body)
		}
	}
	if n := c.Broker(0).MessagesPulled("g-sql92b"); n != int64(len(want)) {
		t.Errorf("the broker's pull answers carried %d messages to the SQL92 group, want %d", n, len(want))
	}
}
