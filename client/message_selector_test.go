package client

import (
	"context"
	"errors"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/internal/fakebroker"
	"github.com/runnelmq/runnel/remoting/protocol"
)

const sqlExpr = "a = '1' AND b > 5"

// sqlBroker starts a fake broker whose SQL92 stand-in passes, for
// sqlExpr only, the messages with a=1. It records the expressions it was
// asked to evaluate.
func sqlBroker(t *testing.T) (*fakebroker.Cluster, *fakebroker.Broker, func() []string) {
	var mu sync.Mutex
	var seen []string
	c := startFake(t, fakebroker.Config{SQL92: func(expr string, props map[string]string) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, expr)
		return expr == sqlExpr && props["a"] == "1"
	}})
	c.CreateTopic("T", 1)
	return c, c.Brokers[0], func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// produceSQL sends m-0..m-5 with tags A, B, C in turn and a=1 on the even
// ones: the broker's filter passes m-0 (A), m-2 (C) and m-4 (B).
func produceSQL(t *testing.T, ns string) {
	p := startProducer(t, ns, nil)
	for i := range 6 {
		m := &Message{Topic: "T", Tags: []string{"A", "B", "C"}[i%3], Body: []byte(fmt.Sprintf("m-%d", i)),
			Properties: map[string]string{"a": fmt.Sprint(1 - i%2), "b": "9"}}
		if _, err := p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPushConsumerSQL92 subscribes with an SQL92 selector: the heartbeat
// and the pulls carry it as SQL92 (not as a tag expression), and the
// consumer delivers exactly what the broker's filter passed, whatever the
// messages' tags.
func TestPushConsumerSQL92(t *testing.T) {
	for _, post := range []bool{false, true} {
		t.Run(fmt.Sprintf("postSubscription=%v", post), func(t *testing.T) {
			c, b, seen := sqlBroker(t)
			produceSQL(t, c.NameServer())
			col := newCollector()
			tags := map[string]string{}
			var mu sync.Mutex
			cons := newConsumer(t, c.NameServer(), "sqlg", func(cfg *PushConsumerConfig) {
				cfg.PostSubscriptionWhenPull = post
				cfg.Concurrently = func(_ context.Context, msgs []*MessageExt) ConsumeResult {
					mu.Lock()
					for _, m := range msgs {
						tags[string(m.Body)] = m.Tags()
					}
					mu.Unlock()
					col.add(msgs)
					return ConsumeSuccess
				}
			})
			if err := cons.SubscribeSelector("T", SQL92Selector(sqlExpr)); err != nil {
				t.Fatal(err)
			}
			if err := cons.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cons.Shutdown(context.Background()) })

			// The committed offset passes the whole queue once the pulled
			// messages are consumed; nothing else can come after that.
			testwait.For(t, 10*time.Second, "offset 6", func() bool { return b.Offset("sqlg", "T", 0) == 6 })
			col.mu.Lock()
			got := fmt.Sprint(col.count)
			col.mu.Unlock()
			if want := "map[m-0:1 m-2:1 m-4:1]"; got != want {
				t.Fatalf("delivered %s, want %s", got, want)
			}
			mu.Lock()
			if fmt.Sprint(tags) != "map[m-0:A m-2:C m-4:B]" {
				t.Errorf("tags %v", tags)
			}
			mu.Unlock()

			sub, ok := b.Subscription("sqlg", "T")
			if !ok || sub.ExpressionType != protocol.ExpressionTypeSQL92 || sub.SubString != sqlExpr ||
				len(sub.TagsSet) != 0 || len(sub.CodeSet) != 0 || sub.SubVersion == 0 {
				t.Fatalf("heartbeat subscription %+v %v", sub, ok)
			}
			h, ok := b.LastPull("sqlg", "T")
			if !ok || h.ExpressionType != protocol.ExpressionTypeSQL92 || h.SubVersion != sub.SubVersion {
				t.Fatalf("pull header %+v %v, want SQL92 with subVersion %d", h, ok, sub.SubVersion)
			}
			if post != (protocol.PullHasSubscription(h.SysFlag) && h.Subscription == sqlExpr) {
				t.Fatalf("pull header subscription %q flag %v with PostSubscriptionWhenPull %v", h.Subscription, protocol.PullHasSubscription(h.SysFlag), post)
			}
			for _, e := range seen() {
				if e != sqlExpr {
					t.Fatalf("the broker evaluated %q", e)
				}
			}
			if len(seen()) == 0 {
				t.Fatal("the broker never evaluated the expression")
			}
		})
	}
}

func TestPullConsumerSQL92(t *testing.T) {
	c, b, _ := sqlBroker(t)
	produceSQL(t, c.NameServer())
	pc := startPullConsumer(t, &backend{ns: c.NameServer(), fake: c}, "sqlpull")
	ctx := context.Background()
	mqs, err := pc.MessageQueues(ctx, "T")
	if err != nil || len(mqs) != 1 {
		t.Fatalf("queues %v %v", mqs, err)
	}
	res, err := pc.Pull(ctx, mqs[0], 0, 32, PullOptions{Expression: sqlExpr, ExpressionType: SQL92Expression})
	if err != nil || res.Status != PullFound || res.NextOffset != 6 {
		t.Fatalf("pull: %+v %v", res, err)
	}
	var got []string
	for _, m := range res.Messages {
		got = append(got, string(m.Body)+"/"+m.Tags())
	}
	if fmt.Sprint(got) != "[m-0/A m-2/C m-4/B]" {
		t.Fatalf("pulled %v", got)
	}
	h, ok := b.LastPull("sqlpull", "T")
	if !ok || h.ExpressionType != protocol.ExpressionTypeSQL92 || h.Subscription != sqlExpr ||
		!protocol.PullHasSubscription(h.SysFlag) || h.SubVersion == 0 {
		t.Fatalf("pull header %+v", h)
	}
	// A tag pull still says TAG and filters by tag.
	res, err = pc.Pull(ctx, mqs[0], 0, 32, PullOptions{Expression: "B"})
	if err != nil || len(res.Messages) != 2 || res.Messages[0].Tags() != "B" {
		t.Fatalf("tag pull: %+v %v", res, err)
	}
	if h, _ := b.LastPull("sqlpull", "T"); h.ExpressionType != protocol.ExpressionTypeTag || h.SubVersion != 0 {
		t.Fatalf("tag pull header %+v", h)
	}
	for _, opts := range []PullOptions{
		{ExpressionType: SQL92Expression, Expression: " "},
		{ExpressionType: "XPATH", Expression: "a"},
	} {
		if _, err := pc.Pull(ctx, mqs[0], 0, 32, opts); !errors.Is(err, ErrBadConfig) {
			t.Errorf("Pull %+v: %v, want ErrBadConfig", opts, err)
		}
	}
}

func TestSubscribeSelectorValidates(t *testing.T) {
	cons := newConsumer(t, "127.0.0.1:1", "g", func(cfg *PushConsumerConfig) {
		cfg.Concurrently = func(context.Context, []*MessageExt) ConsumeResult { return ConsumeSuccess }
	})
	for _, sel := range []MessageSelector{SQL92Selector(""), SQL92Selector(" \t"), {Type: "XPATH", Expression: "a"}} {
		if err := cons.SubscribeSelector("T", sel); !errors.Is(err, ErrBadConfig) {
			t.Errorf("SubscribeSelector(%+v) = %v, want ErrBadConfig", sel, err)
		}
	}
	if err := cons.SubscribeSelector("T", MessageSelector{Expression: "A || B"}); err != nil {
		t.Fatal(err)
	}
	if s := cons.subscriptions()["T"]; !s.IsTagType() || fmt.Sprint(s.TagsSet) != "[A B]" {
		t.Errorf("an untyped selector is a tag selector: %+v", s)
	}
}
