//go:build !race

// These tests drive the official client's consumers, which report data races
// inside themselves under -race (their rebalance against their own offset
// store and pull paths). They run in the test command's race-free pass, so a
// race of theirs cannot fail CI for a reason that is not ours.

package integration

import (
	"context"
	"sync/atomic"
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

	groups := officialGroups(t, c)
	if _, ok := groups["g-admin"]; !ok {
		t.Fatalf("g-admin not listed: %v", groups)
	}
	a := newAdmin(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.DeleteTopic(ctx, admin.WithTopicDelete("Doomed"), admin.WithBrokerAddrDelete(c.BrokerAddr(0)),
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

// TestGroupConfigOfficialClients: a group configured with `runnelctl
// group update` (the binary) is listed with its values by the official
// admin API; an official push consumer of it is refused every pull while
// consumeEnable is false, and consumes the waiting message once a second
// update enables it.
func TestGroupConfigOfficialClients(t *testing.T) {
	c := cluster.Start(t)
	createTopic(t, c, 0, "GCO", 1)
	sendN(t, newProducer(t, c), "GCO", "m", 1, "")
	ctl := mustRunnelctl(t, c.NamesrvAddr())
	ctl("group", "update", "--group", "gco", "--consume-enable=false", "--retry-max-times", "5")

	g, ok := officialGroups(t, c)["gco"]
	if !ok || g.ConsumeEnable || g.RetryMaxTimes != 5 || !g.ConsumeBroadcastEnable || g.RetryQueueNums != 1 {
		t.Fatalf("the official admin reads gco as %+v (listed %v)", g, ok)
	}

	var got atomic.Int32
	newPushConsumer(t, c, "gco", "GCO", "*", func(*primitive.MessageExt) { got.Add(1) })
	b := c.Broker(0)
	before := b.PullRequests()
	testwait.For(t, 30*time.Second, "two pulls of the disabled group", func() bool { return b.PullRequests() >= before+2 })
	if n := got.Load(); n != 0 || b.MessagesPulled("gco") != 0 {
		t.Fatalf("a disabled group consumed %d messages", n)
	}

	ctl("group", "update", "--group", "gco", "--consume-enable=true")
	testwait.For(t, 30*time.Second, "the message consumed once the group is enabled", func() bool { return got.Load() == 1 })
}

// officialGroups is broker 0's subscription groups as the official admin
// API lists them.
func officialGroups(t *testing.T, c *cluster.Cluster) map[string]admin.SubscriptionGroupConfig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := newAdmin(t, c).GetAllSubscriptionGroup(ctx, c.BrokerAddr(0), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return groups.SubscriptionGroupTable
}
