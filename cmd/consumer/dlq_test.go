package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestReadsDeadLetters: the messages a group always fails land in
// %DLQ%<group>, which the broker creates readable, and the consumer CLI
// reads them there like any topic, with no extra step: each with the
// original's id, body, keys, tag and user properties, and the topic it
// came from in RETRY_TOPIC.
func TestReadsDeadLetters(t *testing.T) {
	cl := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.MessageDelayLevel = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s"
	}))
	const topic, group, n = "dlq-source", "dlq-failing", 5 // the fifth body is binary
	createTopic(t, cl, topic, 2)
	want := produce(t, officialProducer(t, cl), topic, 0, n, "TagA", "TagB")

	// Our push consumer (the official one races inside itself), failing
	// everything, with one reconsume before the dead-letter queue.
	cfg := clitest.ConsumerConfig(cl.NamesrvAddr(), "consumer-dlq-test", group)
	cfg.MaxReconsumeTimes = 1
	cfg.Concurrently = func(context.Context, []*client.MessageExt) client.ConsumeResult { return client.ConsumeRetryLater }
	failing := clitest.StartConsumer(t, cfg, topic, "*")

	dlq := admin.DLQTopic(group)
	adm := cl.Admin(t)
	testwait.Until(t, 60*time.Second, dlq+" to hold every message", func() error {
		var held int64
		stats, err := adm.TopicStats(context.Background(), dlq)
		for _, s := range stats {
			held += s.MaxOffset - s.MinOffset
		}
		if err == nil && held == n {
			return nil
		}
		return fmt.Errorf("%s holds %d messages (%v), want %d", dlq, held, err, n)
	})
	_ = failing.Shutdown(context.Background())

	code, stdout, stderr := runHere(t, cl.NamesrvAddr(), "--topic", dlq, "--from", "first", "--max", "5", "--idle-timeout", "30s",
		"-o", "json", "--log-level", "error")
	if code != 0 {
		t.Fatalf("consumer of %s: exit %d, stderr:\n%s", dlq, code, stderr)
	}
	recs := parseJSONLines(t, strings.Split(strings.TrimSpace(stdout), "\n"))
	if len(recs) != n {
		t.Fatalf("read %d dead letters, want %d:\n%s", len(recs), n, stdout)
	}
	for r, s := range sentPrinted(t, recs, want) {
		if r.Topic != dlq || !bytes.Equal(r.body(t), s.body) || !slices.Equal(r.Keys, s.keys) || r.Tags != s.tag ||
			r.Properties["RETRY_TOPIC"] != topic || r.Properties["seq"] == "" {
			t.Errorf("dead letter %+v, sent %+v", r, s)
		}
	}
}
