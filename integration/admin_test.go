//go:build !race

// These tests drive the official client's consumers, which report data races
// inside themselves under -race (their rebalance against their own offset
// store and pull paths). They run in the test command's race-free pass, so a
// race of theirs cannot fail CI for a reason that is not ours.

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestOfficialAdmin: the official admin API lists subscription groups and
// deletes a topic from the broker and the name server.
func TestOfficialAdmin(t *testing.T) {
	c := cluster.Start(t)
	createTopic(t, c, 0, "Doomed", 2)
	p := newProducer(t, c)
	sendN(t, p, "Doomed", "x", 3, "")
	newPushConsumer(t, c, "g-admin", "Doomed", "*", func(*primitive.MessageExt) {})
	testwait.For(t, testwait.Default, "the group registered", func() bool { return len(c.Broker(0).ConsumerIDs("g-admin")) == 1 })

	a := newAdmin(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := a.GetAllSubscriptionGroup(ctx, c.BrokerAddr(0), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := groups.SubscriptionGroupTable["g-admin"]; !ok {
		t.Fatalf("g-admin not listed: %v", groups.SubscriptionGroupTable)
	}
	err = a.DeleteTopic(ctx, admin.WithTopicDelete("Doomed"), admin.WithBrokerAddrDelete(c.BrokerAddr(0)),
		admin.WithNameSrvAddr([]string{c.NamesrvAddr()}))
	if err != nil {
		t.Fatal(err)
	}
	if _, code := routeOf(t, c, "Doomed"); code != 17 {
		t.Fatalf("route after delete: code %d", code)
	}
	if c.Broker(0).Store().MaxOffset("Doomed", 0)+c.Broker(0).Store().MaxOffset("Doomed", 1) != 0 {
		t.Fatal("queues kept after delete")
	}
}
