//go:build !race

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/internal/testwait"
)

// The clients TestCompose drives from the host, and what it checks with.

func sendOfficial(t *testing.T, ctx context.Context, namesrv, topic string, bodies []string) {
	t.Helper()
	p, err := rocketmq.NewProducer(
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{namesrv})),
		producer.WithInstanceName(official.Instance("compose-p")),
		producer.WithGroupName("compose-pg"),
		producer.WithRetry(2),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	for _, b := range bodies {
		if _, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(b))); err != nil {
			t.Fatalf("official send %s: %v", b, err)
		}
	}
}

func sendOurs(t *testing.T, ctx context.Context, namesrv, topic string, bodies []string) {
	t.Helper()
	p := composeProducer(t, ctx, namesrv, "compose-rp", "compose-rc-pg")
	defer p.Shutdown(context.Background())
	for _, b := range bodies {
		if _, err := p.Send(ctx, &client.Message{Topic: topic, Body: []byte(b)}); err != nil {
			t.Fatalf("our send %s: %v", b, err)
		}
	}
}

// composeProducer starts our producer of group through namesrv, its
// instance name from prefix; the caller shuts it down.
func composeProducer(t *testing.T, ctx context.Context, namesrv, prefix, group string) *client.Producer {
	t.Helper()
	cfg := client.DefaultProducerConfig()
	cfg.Client.NameServerAddrs = []string{namesrv}
	cfg.Client.InstanceName = official.Instance(prefix)
	cfg.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Group = group
	p, err := client.NewProducer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

func composeConsumerConfig(namesrv, group string) client.PushConsumerConfig {
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = client.DefaultClientConfig()
	cfg.Client.NameServerAddrs = []string{namesrv}
	cfg.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Client.PersistInterval = 200 * time.Millisecond
	cfg.Group = group
	cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	return cfg
}

// consumeOurs runs our push consumer until every body of want arrived and
// the group's committed offsets add up to committed, then shuts it down.
// It returns every body received.
func consumeOurs(t *testing.T, ctx context.Context, adm *admin.Admin, cfg client.PushConsumerConfig, topic string, want []string, committed int64) *composeCollector {
	t.Helper()
	got := newComposeCollector()
	cfg.Client.InstanceName = official.Instance("compose-rc")
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			got.add(string(m.Body))
		}
		return client.ConsumeSuccess
	}
	c, err := client.NewPushConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, "*"); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Errorf("our consumer's shutdown: %v", err)
		}
	}()
	testwait.For(t, 60*time.Second, fmt.Sprintf("our consumer in %s receiving %d messages", cfg.Group, len(want)),
		func() bool { return got.hasAll(want) })
	waitCommittedTotal(t, ctx, adm, cfg.Group, topic, committed)
	return got
}

// consumeOfficial runs the official push consumer until every body of want
// arrived and its committed offsets cover all of want, then shuts it down.
// Offsets are waited for while it runs, from its periodic commit (every
// 5 s): what its shutdown sends is oneway and may be cut off.
func consumeOfficial(t *testing.T, ctx context.Context, adm *admin.Admin, namesrv, group, topic string, want []string) {
	t.Helper()
	got := newComposeCollector()
	c := subscribed(t, namesrv, group, topic, consumer.MessageSelector{}, accept(func(m *primitive.MessageExt) { got.add(string(m.Body)) }))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Shutdown() }()
	testwait.For(t, 60*time.Second, fmt.Sprintf("the official consumer in %s receiving %d messages", group, len(want)),
		func() bool { return got.hasAll(want) })
	waitCommittedTotal(t, ctx, adm, group, topic, int64(len(want)))
}

// waitCommittedTotal waits until group's committed offsets on topic add up
// to want (every queue starts at 0).
func waitCommittedTotal(t *testing.T, ctx context.Context, adm *admin.Admin, group, topic string, want int64) {
	t.Helper()
	testwait.Until(t, 30*time.Second, fmt.Sprintf("group %s's committed offsets on %s to add up to %d", group, topic, want), func() error {
		prog, err := adm.ConsumerProgress(ctx, group, topic)
		if last := committedTotal(prog); err != nil || last != want {
			return fmt.Errorf("they add up to %d (%v)", last, err)
		}
		return nil
	})
}

// topicQueues is the topic's queues with their offset ranges.
func topicQueues(t *testing.T, ctx context.Context, adm *admin.Admin, topic string) []admin.QueueStats {
	t.Helper()
	qs, err := adm.TopicStats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return stripStats(qs)
}

// stripStats keeps what a restart must preserve: the queues and their
// offset ranges.
func stripStats(qs []admin.QueueStats) []admin.QueueStats {
	out := make([]admin.QueueStats, len(qs))
	for i, q := range qs {
		out[i] = admin.QueueStats{Topic: q.Topic, Broker: q.Broker, QueueID: q.QueueID, MinOffset: q.MinOffset, MaxOffset: q.MaxOffset}
	}
	return out
}

func storedTotal(qs []admin.QueueStats) int64 {
	var n int64
	for _, q := range qs {
		n += q.MaxOffset - q.MinOffset
	}
	return n
}

// groupOffsets is group's per-queue broker and committed offsets.
func groupOffsets(t *testing.T, ctx context.Context, adm *admin.Admin, group, topic string) []admin.QueueProgress {
	t.Helper()
	prog, err := adm.ConsumerProgress(ctx, group, topic)
	if err != nil {
		t.Fatalf("progress of %s: %v", group, err)
	}
	out := make([]admin.QueueProgress, len(prog))
	for i, q := range prog {
		out[i] = admin.QueueProgress{Topic: q.Topic, Broker: q.Broker, QueueID: q.QueueID,
			BrokerOffset: q.BrokerOffset, ConsumerOffset: q.ConsumerOffset}
	}
	return out
}

func committedTotal(prog []admin.QueueProgress) int64 {
	var n int64
	for _, q := range prog {
		n += max(q.ConsumerOffset, 0)
	}
	return n
}

// decodeLines decodes one JSON object per line, as the CLIs print with
// json output.
func decodeLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var rows []T
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r T
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v\n%s", line, err, out)
		}
		rows = append(rows, r)
	}
	return rows
}

func composeBodies(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// sameSet reports whether a and b hold the same strings the same number of
// times.
func sameSet(a, b []string) bool {
	return slices.Equal(sorted(a), sorted(b))
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// lineWith returns the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// composeCollector records the bodies a consumer received.
type composeCollector struct {
	mu   sync.Mutex
	seen map[string]bool
}

func newComposeCollector() *composeCollector { return &composeCollector{seen: map[string]bool{}} }

func (c *composeCollector) add(body string) {
	c.mu.Lock()
	c.seen[body] = true
	c.mu.Unlock()
}

func (c *composeCollector) hasAll(bodies []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bodies {
		if !c.seen[b] {
			return false
		}
	}
	return true
}

// without returns the received bodies that are not in want, sorted.
func (c *composeCollector) without(want []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var extra []string
	for b := range c.seen {
		if !slices.Contains(want, b) {
			extra = append(extra, b)
		}
	}
	slices.Sort(extra)
	return extra
}
