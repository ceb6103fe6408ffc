package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
)

// pushConsumer starts our push consumer of topic in group from the first
// offset, with instance as its InstanceName, and shuts it down when the test
// ends (an earlier Shutdown makes that a no-op). got is closed once want
// distinct messages have arrived.
func pushConsumer(t *testing.T, namesrv, instance, group, topic string, want int) (cons *client.PushConsumer, id string, got <-chan struct{}) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		done = make(chan struct{})
	)
	cfg := clitest.ConsumerConfig(namesrv, instance, group)
	cfg.Client.ClientIP = "127.0.0.1"
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		mu.Lock()
		defer mu.Unlock()
		before := len(seen)
		for _, m := range msgs {
			seen[m.MsgID] = true
		}
		if before < want && len(seen) >= want {
			close(done)
		}
		return client.ConsumeSuccess
	}
	return clitest.StartConsumer(t, cfg, topic, "*"), cfg.Client.ClientID(), done
}

// TestProcessGroupConsumers drives `group consumers` from the built binary
// against a live consumer of ours: its connection, then its running info
// as a table and as JSON, and the errors for a group nobody consumes.
func TestProcessGroupConsumers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a cluster")
	}
	bin := buildBinary(t)
	cl := cluster.Start(t)
	c := ctl{t: t, bin: bin, namesrv: cl.NamesrvAddr()}
	const topic, group = "live-orders", "live-billing"
	c.ok("", "topic", "create", topic, "--queues", "2")
	c.ok("a\nb\nc\n", "send", "--topic", topic)
	_, id, got3 := pushConsumer(t, cl.NamesrvAddr(), "runnelctl-live-"+group, group, topic, 3)
	deadline := time.Now().Add(20 * time.Second)
	select {
	case <-got3:
	case <-time.After(time.Until(deadline)):
		t.Fatal("the 3 messages were not consumed in 20s")
	}

	out := c.ok("", "group", "consumers", "--group", group)
	for _, want := range []string{"group " + group + ": CLUSTERING", id, "GO", cl.BrokerName(0), topic} {
		if !strings.Contains(out, want) {
			t.Fatalf("group consumers: no %q in\n%s", want, out)
		}
	}

	// Running info, once both queues show the offsets committed.
	var got consumersOutput
	for {
		got = consumersOutput{}
		c.okJSON(&got, "group", "consumers", "--group", group, "--running")
		if len(got.Running) == 1 && got.Running[0].Info != nil {
			var committed int64
			for _, q := range got.Running[0].Info.Queues {
				if q.Topic == topic {
					committed += q.CommitOffset
				}
			}
			if committed == 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(got)
			t.Fatalf("running info never showed 3 committed: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got.ConsumerConnection == nil || len(got.Clients) != 1 || got.Clients[0].ClientID != id ||
		got.Running[0].ClientID != id || got.Running[0].Info.Properties["consumerGroup"] != group {
		b, _ := json.Marshal(got)
		t.Fatalf("json: %s", b)
	}
	out = c.ok("", "group", "consumers", "--group", group, "--running")
	for _, want := range []string{"== " + id, "COMMIT OFFSET", "consumerGroup", "asked through broker " + cl.BrokerName(0)} {
		if !strings.Contains(out, want) {
			t.Fatalf("group consumers --running: no %q in\n%s", want, out)
		}
	}

	r := c.run("", "group", "consumers", "--group", "nobody-here")
	if r.code != 1 || !strings.Contains(r.stderr, "not online") {
		t.Fatalf("offline group: exit %d, stderr %q", r.code, r.stderr)
	}
	r = c.run("", "group", "consumers", "--group", group, "--stack")
	if r.code != 1 || !strings.Contains(r.stderr, "--stack needs --running") {
		t.Fatalf("--stack alone: exit %d, stderr %q", r.code, r.stderr)
	}
}
