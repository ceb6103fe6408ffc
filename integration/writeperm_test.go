package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

// TestWipeWritePermOfficialProducer: after `runnelctl broker
// wipe-write-perm` on one of two broker groups, a new official producer
// sends only to the other (the route says the wiped one is not writable);
// after `add-write-perm` it sends to both again.
func TestWipeWritePermOfficialProducer(t *testing.T) {
	c := cluster.Start(t, cluster.Brokers(2))
	createTopic(t, c, 0, "WP", 2)
	createTopic(t, c, 1, "WP", 2)
	ctl := mustRunnelctl(t, c.NamesrvAddr())
	wiped := c.Broker(0).Config().BrokerName

	brokersOf := func(n int) map[string]int {
		t.Helper()
		p := newProducer(t, c) // a new one: no route cached from before
		defer func() { _ = p.Shutdown() }()
		seen := map[string]int{}
		for i := range n {
			res, err := p.SendSync(context.Background(), primitive.NewMessage("WP", []byte(fmt.Sprint("m", i))))
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
			seen[res.MessageQueue.BrokerName]++
		}
		return seen
	}

	out := ctl("broker", "wipe-write-perm", "--broker", wiped)
	t.Logf("wipe-write-perm:\n%s", out)
	if seen := brokersOf(8); seen[wiped] != 0 || len(seen) != 1 {
		t.Fatalf("after the wipe the official producer sent to %v, want none to %s", seen, wiped)
	}
	ctl("broker", "add-write-perm", "--broker", wiped)
	if seen := brokersOf(8); seen[wiped] == 0 || len(seen) != 2 {
		t.Fatalf("after the add the official producer sent to %v, want both groups", seen)
	}
}
