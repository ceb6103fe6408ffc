package main

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/clitest"
)

// TestStatsAllHidesSystemTopicsAndShowsRates: stats all leaves out the
// topics topic list hides (the cluster's and broker's own, the reply
// topic, TBW102) unless --all, and shows a topic's rate in and its group's
// rate out, measured over --interval while messages flow (issue 38).
func TestStatsAllHidesSystemTopicsAndShowsRates(t *testing.T) {
	cl, env := onCluster(t)
	const topic, group = "rates", "rates-group"
	okRun(t, env, "", "topic", "create", topic, "--queues", "2")

	prod := clitest.StartProducer(t, clitest.ProducerConfig(cl.NamesrvAddr(), "rates-producer", "rates-producers"))
	ccfg := clitest.ConsumerConfig(cl.NamesrvAddr(), "rates-consumer", group)
	ccfg.Client.PersistInterval = 50 * time.Millisecond // offsets committed often: OutTPS follows them
	ccfg.Concurrently = func(context.Context, []*client.MessageExt) client.ConsumeResult { return client.ConsumeSuccess }
	clitest.StartConsumer(t, ccfg, topic, "*")
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			_, _ = prod.Send(ctx, &client.Message{Topic: topic, Body: []byte("x")})
			time.Sleep(2 * time.Millisecond)
		}
	}()

	stats := func(args ...string) []statsRow {
		t.Helper()
		var rows []statsRow
		r := okRun(t, env, "", append([]string{"stats", "all", "-o", "json"}, args...)...)
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		return rows
	}
	system := map[string]bool{"DefaultCluster": true, cl.BrokerName(0): true, "DefaultCluster_REPLY_TOPIC": true, "TBW102": true}
	var found bool
	for _, r := range stats("--interval", "1s") {
		if system[r.Topic] {
			t.Errorf("stats all shows the system topic %s", r.Topic)
		}
		if r.Topic == topic && r.Group == group {
			found = true
			if r.InTPS <= 0 || r.OutTPS <= 0 {
				t.Errorf("rates of a topic in use: in %.1f out %.1f msg/s", r.InTPS, r.OutTPS)
			}
		}
	}
	if !found {
		t.Error("no row for the topic and its group")
	}
	shown := map[string]bool{}
	for _, r := range stats("--all", "--interval", "0") {
		shown[r.Topic] = true
		if r.InTPS != 0 || r.OutTPS != 0 {
			t.Errorf("--interval 0 measured a rate: %+v", r)
		}
	}
	if !shown["DefaultCluster"] || !shown["TBW102"] {
		t.Errorf("stats all --all shows %v, want the system topics too", shown)
	}
	if rows := stats("--topic", topic, "--interval", "0"); len(rows) != 1 || rows[0].Group != group {
		t.Errorf("stats all --topic: %+v", rows)
	}
}
