//go:build !race

// The official client's push consumer reports data races inside itself
// under -race; this test runs in the race-free pass (see admin_test.go).

package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

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

	a := newAdmin(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := a.GetAllSubscriptionGroup(ctx, c.BrokerAddr(0), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := groups.SubscriptionGroupTable["gco"]
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
