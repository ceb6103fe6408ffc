//go:build !race

// The compose test drives the official client's push consumer, which reports
// data races inside itself under -race; it runs in the test command's
// second, race-free pass.

package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
)

// composeNamesrv is where docker-compose.yml publishes the name server.
const composeNamesrv = "127.0.0.1:9876"

// TestCompose builds the FROM-scratch images, brings the compose cluster
// up, produces and consumes through the published ports with the official
// client and with ours, restarts a broker container and checks its data
// survived, and takes everything down. It needs a Docker engine and runs
// only when RUNNEL_COMPOSE_TEST=1 (.ci/run sets it where docker works).
func TestCompose(t *testing.T) {
	if os.Getenv("RUNNEL_COMPOSE_TEST") != "1" {
		t.Skip("set RUNNEL_COMPOSE_TEST=1 to run the docker compose test")
	}
	root := repoRoot(t)
	script := filepath.Join(root, "scripts", "compose.sh")
	env := append(os.Environ(), "COMPOSE_PROJECT_NAME=runnel-test")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(script, args...)
		cmd.Dir = root
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("compose.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	compose := func(args ...string) {
		t.Helper()
		full := append([]string{"-p", "runnel-test"}, args...)
		cmd := exec.Command("docker-compose", full...)
		if _, err := exec.LookPath("docker-compose"); err != nil {
			cmd = exec.Command("docker", append([]string{"compose"}, full...)...)
		}
		cmd.Dir = root
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compose %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	t.Log(strings.TrimSpace(run("images")))
	t.Cleanup(func() { run("down") })
	start := time.Now()
	up := run("up")
	t.Logf("up to healthy: %v (%s)", time.Since(start).Round(100*time.Millisecond), lastLine(up))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The cluster answers from the host: two broker groups registered.
	adm, err := admin.New(admin.Config{NamesrvAddrs: []string{composeNamesrv}})
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	eventually(t, 30*time.Second, "two brokers registered", func() bool {
		bs, err := adm.Brokers(ctx)
		return err == nil && len(bs) == 2
	})
	topic := fmt.Sprintf("ComposeTopic%d", time.Now().UnixNano()%1e9)
	if _, err := adm.CreateTopic(ctx, admin.TopicSpec{Topic: topic, ReadQueueNums: 4, WriteQueueNums: 4}); err != nil {
		t.Fatalf("create topic: %v", err)
	}

	// Official producer -> our consumer.
	p, err := rocketmq.NewProducer(
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{composeNamesrv})),
		producer.WithInstanceName(instance("compose-p")),
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
	const n = 40
	for i := 0; i < n; i++ {
		if _, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(fmt.Sprintf("official-%d", i)))); err != nil {
			t.Fatalf("official send %d: %v", i, err)
		}
	}
	ours := newComposeCollector()
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = client.DefaultClientConfig()
	cfg.Client.NameServerAddrs = []string{composeNamesrv}
	cfg.Client.InstanceName = instance("compose-rc")
	cfg.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Group = "compose-rc-group"
	cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		for _, m := range msgs {
			ours.add(string(m.Body))
		}
		return client.ConsumeSuccess
	}
	rc, err := client.NewPushConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Subscribe(topic, "*"); err != nil {
		t.Fatal(err)
	}
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "our consumer receives the official producer's messages",
		func() bool { return ours.count("official-") == n })
	if err := rc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	// Our producer -> the official consumer.
	pcfg := client.DefaultProducerConfig()
	pcfg.Client = cfg.Client
	pcfg.Client.InstanceName = instance("compose-rp")
	pcfg.Group = "compose-rc-pg"
	rp, err := client.NewProducer(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rp.Shutdown(context.Background())
	for i := 0; i < n; i++ {
		if _, err := rp.Send(ctx, &client.Message{Topic: topic, Body: []byte(fmt.Sprintf("ours-%d", i))}); err != nil {
			t.Fatalf("our send %d: %v", i, err)
		}
	}
	theirs := newComposeCollector()
	oc, err := rocketmq.NewPushConsumer(
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{composeNamesrv})),
		consumer.WithInstance(instance("compose-c")),
		consumer.WithGroupName("compose-official-group"),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = oc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			theirs.add(string(m.Body))
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := oc.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the official consumer receives our producer's messages",
		func() bool { return theirs.count("ours-") == n })
	_ = oc.Shutdown()

	// Restart broker-a's container: its messages and the groups' offsets
	// live on its named volume.
	before := queueTotals(t, ctx, adm, topic)
	t.Logf("memory: %s", dockerMemory(t))
	compose("restart", "broker-a")
	run("wait")
	eventually(t, 60*time.Second, "broker-a serves the same data after its restart", func() bool {
		after, err := queueTotalsErr(ctx, adm, topic)
		return err == nil && after == before
	})
	if before == 0 {
		t.Fatal("no messages counted before the restart")
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Dir(filepath.Dir(file))
}

// queueTotals is the sum of the topic's per-queue max offsets on every broker.
func queueTotals(t *testing.T, ctx context.Context, adm *admin.Admin, topic string) int64 {
	t.Helper()
	n, err := queueTotalsErr(ctx, adm, topic)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func queueTotalsErr(ctx context.Context, adm *admin.Admin, topic string) (int64, error) {
	stats, err := adm.TopicStats(ctx, topic)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, q := range stats {
		total += q.MaxOffset - q.MinOffset
	}
	return total, nil
}

func dockerMemory(t *testing.T) string {
	out, err := exec.Command("docker", "stats", "--no-stream", "--format", "{{.Name}}={{.MemUsage}}").Output()
	if err != nil {
		return err.Error()
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

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

func (c *composeCollector) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for b := range c.seen {
		if strings.HasPrefix(b, prefix) {
			n++
		}
	}
	return n
}
