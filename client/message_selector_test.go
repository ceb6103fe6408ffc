package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/internal/teststart"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

const sqlExpr = "a = '1' AND b > 5"

// sqlBroker starts a Runnel broker that filters by SQL92
// (enablePropertyFilter) with topic T of one queue.
func sqlBroker(t *testing.T) *backend {
	be := startRunnel(t, 1, func(_ int, cfg *config.Config) { cfg.EnablePropertyFilter = true })
	be.createTopic(t, "T", 1)
	return be
}

// lastPull returns the header of group's latest PULL_MESSAGE from topic the
// broker was asked.
func lastPull(t *testing.T, tap *brokertap.Tap, group, topic string) (protocol.PullMessageRequestHeader, bool) {
	t.Helper()
	var h protocol.PullMessageRequestHeader
	pulls := tap.Requests(func(req *protocol.Command) bool {
		return req.Code == protocol.ReqPullMessage && req.Ext("consumerGroup") == group && req.Ext("topic") == topic
	})
	if len(pulls) == 0 {
		return h, false
	}
	if err := h.Decode(pulls[len(pulls)-1].Fields()); err != nil {
		t.Fatal(err)
	}
	return h, true
}

// heartbeatSubscription returns the subscription to topic that group's
// latest heartbeat to the broker carried.
func heartbeatSubscription(t *testing.T, tap *brokertap.Tap, group, topic string) (protocol.SubscriptionData, bool) {
	t.Helper()
	hbs := tap.Requests(brokertap.Code(protocol.ReqHeartBeat))
	for i := len(hbs) - 1; i >= 0; i-- {
		hb, err := protocol.DecodeHeartbeatData(hbs[i].Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, cd := range hb.ConsumerDataSet {
			if cd.GroupName != group {
				continue
			}
			for _, sub := range cd.SubscriptionDataSet {
				if sub.Topic == topic {
					return sub, true
				}
			}
		}
	}
	return protocol.SubscriptionData{}, false
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
// and the pulls carry it as SQL92 (not as a tag expression), the broker
// compiles and applies it, and the consumer delivers exactly what the
// broker's filter passed, whatever the messages' tags.
func TestPushConsumerSQL92(t *testing.T) {
	for _, post := range []bool{false, true} {
		t.Run(fmt.Sprintf("postSubscription=%v", post), func(t *testing.T) {
			be := sqlBroker(t)
			produceSQL(t, be.ns)
			col := newCollector()
			tags := map[string]string{}
			var mu sync.Mutex
			cons := newConsumer(t, be.ns, "sqlg", func(cfg *PushConsumerConfig) {
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
			teststart.Started(t, cons, cons.SubscribeSelector("T", SQL92Selector(sqlExpr)))

			// The committed offset passes the whole queue once the pulled
			// messages are consumed; nothing else can come after that.
			testwait.For(t, 10*time.Second, "offset 6", func() bool { return be.brokerOffset(0, "sqlg", "T", 0) == 6 })
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

			sub, ok := heartbeatSubscription(t, be.taps[0], "sqlg", "T")
			if !ok || sub.ExpressionType != protocol.ExpressionTypeSQL92 || sub.SubString != sqlExpr ||
				len(sub.TagsSet) != 0 || len(sub.CodeSet) != 0 || sub.SubVersion == 0 {
				t.Fatalf("heartbeat subscription %+v %v", sub, ok)
			}
			h, ok := lastPull(t, be.taps[0], "sqlg", "T")
			if !ok || h.ExpressionType != protocol.ExpressionTypeSQL92 || h.SubVersion != sub.SubVersion {
				t.Fatalf("pull header %+v %v, want SQL92 with subVersion %d", h, ok, sub.SubVersion)
			}
			if post != (protocol.PullHasSubscription(h.SysFlag) && h.Subscription == sqlExpr) {
				t.Fatalf("pull header subscription %q flag %v with PostSubscriptionWhenPull %v", h.Subscription, protocol.PullHasSubscription(h.SysFlag), post)
			}
			if n := be.broker(0).Core().CompiledExpressions(); n != 1 {
				t.Fatalf("the broker compiled %d SQL92 expressions, want the one subscribed", n)
			}
		})
	}
}

func TestPullConsumerSQL92(t *testing.T) {
	be := sqlBroker(t)
	produceSQL(t, be.ns)
	pc := startPullConsumer(t, be, "sqlpull")
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
	h, ok := lastPull(t, be.taps[0], "sqlpull", "T")
	if !ok || h.ExpressionType != protocol.ExpressionTypeSQL92 || h.Subscription != sqlExpr ||
		!protocol.PullHasSubscription(h.SysFlag) || h.SubVersion == 0 {
		t.Fatalf("pull header %+v", h)
	}
	// A tag pull still says TAG and filters by tag.
	res, err = pc.Pull(ctx, mqs[0], 0, 32, PullOptions{Expression: "B"})
	if err != nil || len(res.Messages) != 2 || res.Messages[0].Tags() != "B" {
		t.Fatalf("tag pull: %+v %v", res, err)
	}
	if h, _ := lastPull(t, be.taps[0], "sqlpull", "T"); h.ExpressionType != protocol.ExpressionTypeTag || h.SubVersion != 0 {
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
