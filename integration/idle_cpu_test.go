package integration

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// idleCPUBudget bounds the CPU the whole test process (name server, broker
// and a subscribed consumer) may use in idleWindow. A busy-polling consumer
// or a broker that spins on held pulls burns a core (1 s per second);
// near-zero is a few milliseconds. The bound is loose so that a slow,
// loaded CI machine (and the race detector) cannot fail it, while a spin
// still would by two orders of magnitude.
const (
	idleWindow    = 3 * time.Second
	idleCPUBudget = 150 * time.Millisecond
)

func processCPU(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestIdleSubscribedConsumerCostsNearZeroCPU: with a consumer subscribed to
// an idle topic, the broker holds its pulls (long polling) instead of
// answering them empty, so nothing in the process runs: CPU used over the
// idle window stays near zero, and the pull count does not move. A message
// sent afterwards still arrives at once through a held pull.
func TestIdleSubscribedConsumerCostsNearZeroCPU(t *testing.T) {
	c := rcCluster(t)
	createTopic(t, c, 0, "Idle", 8)
	got := make(chan string, 1)
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = rcClientConfig(c)
	// The client's own periodic work at its defaults (the test helpers
	// shorten it), so the window shows what an idle application costs.
	def := client.DefaultClientConfig()
	cfg.Client.RebalanceInterval, cfg.Client.PersistInterval, cfg.Client.RouteRefreshInterval =
		def.RebalanceInterval, def.PersistInterval, def.RouteRefreshInterval
	cfg.Group = "g-idle"
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			got <- string(m.Body)
		}
		return client.ConsumeSuccess
	}
	clitest.StartConsumer(t, cfg, "Idle", "*")
	testwait.For(t, testwait.Default, "a held pull on every queue", func() bool { return c.Broker(0).PullRequests() >= 8 })
	// Let start-up work (first rebalance, offset queries, route refresh)
	// finish before measuring.
	time.Sleep(500 * time.Millisecond)

	pulls, cpu := c.Broker(0).PullRequests(), processCPU(t)
	time.Sleep(idleWindow)
	used, newPulls := processCPU(t)-cpu, c.Broker(0).PullRequests()-pulls
	t.Logf("idle %v: %v CPU for the whole process, %d pull requests", idleWindow, used, newPulls)
	if used > idleCPUBudget {
		t.Errorf("idle process used %v CPU in %v (budget %v)", used, idleWindow, idleCPUBudget)
	}
	// Our client renews a held pull only when the broker answers it
	// (after its suspend time, 15 s by default).
	if newPulls > 8 {
		t.Errorf("%d pull requests in %v from an idle consumer", newPulls, idleWindow)
	}

	p := rcProducer(t, c)
	if _, err := p.Send(context.Background(), &client.Message{Topic: "Idle", Body: []byte("wake")}); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if b != "wake" {
			t.Fatalf("got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("message sent to the idle topic never arrived")
	}
}
