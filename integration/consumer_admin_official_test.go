//go:build !race

// The official client's push consumer reports data races inside itself
// under -race; this test runs in the race-free pass (see admin_test.go).

package integration

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestConsumerAdminOfficialClient: the official client's push consumer
// answers the requests the broker forwards — its running info, with its
// goroutine dump (which it writes into the JSON unescaped), and a message
// consumed directly. TestConsumerAdminRunnelClient asks our client the
// same; each answers its own way, so the two look alike by design.
func TestConsumerAdminOfficialClient(t *testing.T) {
	c := rcCluster(t, cluster.Brokers(2))
	const topic, group = "LiveOfficialT", "live-official-g"
	createTopic(t, c, 0, topic, 2)
	p := newProducer(t, c)
	var ids []string
	for i := range 6 {
		res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body(i))))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.OffsetMsgID)
	}
	var consumed, again atomic.Int64
	newPushConsumer(t, c, group, topic, "*", func(m *primitive.MessageExt) {
		if consumed.Add(1) > 6 && string(m.Body) == body(2) {
			again.Add(1)
		}
	})
	testwait.For(t, 30*time.Second, "every message consumed", func() bool { return consumed.Load() >= 6 })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := c.Admin(t)
	cl := onlyClient(t, ctx, a, group, c.BrokerName(0))
	if cl.Language != "GO" {
		t.Fatalf("client %+v", cl)
	}

	ri, err := a.ConsumerRunningInfo(ctx, group, cl.ClientID, true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range ri.Subscriptions {
		found = found || s.Topic == topic
	}
	n := 0
	for _, q := range ri.Queues {
		if q.Topic == topic {
			n++
		}
	}
	if !found || n != 2 || ri.Properties["PROP_CONSUME_TYPE"] != "CONSUME_PASSIVELY" || !strings.Contains(ri.Stack, "goroutine") {
		t.Fatalf("running info: subscriptions %+v, %d queues of %s, properties %v, stack %d bytes",
			ri.Subscriptions, n, topic, ri.Properties, len(ri.Stack))
	}
	if _, ok := ri.Status[topic]; !ok {
		t.Fatalf("no consume status for %s: %+v", topic, ri.Status)
	}

	res, err := a.ConsumeMessageDirectly(ctx, group, cl.ClientID, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "CR_SUCCESS" || again.Load() != 1 {
		t.Fatalf("result %+v, message 2 consumed again %d times", res, again.Load())
	}
}
