//go:build !race

package integration

import (
	"context"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

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
	sc, err := newSQLConsumer(c, "g-sql92b", topic, "n >= 10 AND (color = 'red' OR color IS NULL) AND TAGS = 'A'", sqlGot.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Shutdown() })
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

func newSQLConsumer(c *cluster.Cluster, group, topic, expr string, fn func(*primitive.MessageExt)) (interface{ Shutdown() error }, error) {
	pc, err := consumer.NewPushConsumer(
		consumer.WithNameServer([]string{c.NamesrvAddr()}),
		consumer.WithInstance(instance("sql")),
		consumer.WithGroupName(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		return nil, err
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{Type: consumer.SQL92, Expression: expr},
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				fn(m)
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return nil, err
	}
	return pc, pc.Start()
}
