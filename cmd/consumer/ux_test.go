package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// runHere runs the consumer's command line in this process.
func runHere(t *testing.T, namesrv string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, env{
		getenv: func(k string) string {
			if k == "NAMESRV_ADDR" {
				return namesrv
			}
			return ""
		},
		stdout: &out, stderr: &errOut,
	})
	return code, out.String(), errOut.String()
}

// A topic whose queues are all write-only (a dead-letter topic, or one set
// to perm W) is refused with the reason, not consumed as nothing.
func TestNoReadableQueueIsAnError(t *testing.T) {
	cl := cluster.Start(t)
	adm := cl.Admin(t)
	for _, topic := range []string{"wo", "%DLQ%billing"} {
		if _, err := adm.CreateTopic(context.Background(), admin.TopicSpec{Topic: topic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: protocol.PermWrite}); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runHere(t, cl.NamesrvAddr(), "--topic", "wo", "--idle-timeout", "200ms", "--log-level", "error")
	if code != 1 || !strings.Contains(stderr, "consumer: topic wo has no readable queue: its perm") {
		t.Fatalf("write-only topic: exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = runHere(t, cl.NamesrvAddr(), "--topic", "%DLQ%billing", "--from", "first", "--idle-timeout", "200ms", "--log-level", "error")
	if code != 1 || !strings.Contains(stderr, "RocketMQ before 4.7 creates dead-letter topics write-only") {
		t.Fatalf("DLQ topic: exit %d, stderr:\n%s", code, stderr)
	}
}

// --group with a new group and the default --from last starts past the
// backlog of a young topic, as the help promises, and says so.
func TestNewNamedGroupStartsAtLast(t *testing.T) {
	cl := cluster.Start(t)
	const topic = "young"
	createTopic(t, cl, topic, 2)
	produce(t, officialProducer(t, cl), topic, 0, 6, "TagA")
	code, stdout, stderr := runHere(t, cl.NamesrvAddr(), "--topic", topic, "--group", "brand-new", "--idle-timeout", "500ms", "-o", "json", "--log-level", "error")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, printed %q (a new group at last must print none of the 6 stored); stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "group brand-new has no offsets on young yet: starting it at --from last") ||
		!strings.Contains(stderr, "consuming 2 queues of young") || !strings.Contains(stderr, "after 0 messages") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	// Its offsets now sit at the end: a second run has nothing to say
	// about new groups.
	rows, err := cl.Admin(t).ConsumerProgress(context.Background(), "brand-new", topic)
	if err != nil || len(rows) != 2 || admin.TotalLag(rows) != 0 {
		t.Fatalf("progress of brand-new: %+v %v, want 2 queues without lag", rows, err)
	}
	_, _, stderr = runHere(t, cl.NamesrvAddr(), "--topic", topic, "--group", "brand-new", "--idle-timeout", "200ms", "--log-level", "error")
	if strings.Contains(stderr, "has no offsets") {
		t.Fatalf("second run treated the group as new:\n%s", stderr)
	}
}

func TestShortNamesrvAndVersion(t *testing.T) {
	// -n is the name server (as mqadmin), no longer --max.
	code, _, stderr := runHere(t, "", "-n", "5", "--topic", "t")
	if code != 1 || !strings.Contains(stderr, `--namesrv "5": want host:port`) {
		t.Fatalf("-n 5: exit %d, %s", code, stderr)
	}
	code, stdout, _ := runHere(t, "", "--version")
	if code != 0 || !strings.HasPrefix(stdout, "runnel ") {
		t.Fatalf("--version: %d %q", code, stdout)
	}
	// --format stays as a hidden alias of -o/--output.
	code, _, stderr = runHere(t, "", "--topic", "t", "--format", "yaml")
	if code != 1 || !strings.Contains(stderr, `--output "yaml"`) {
		t.Fatalf("--format yaml: %d %s", code, stderr)
	}
}

// A name server that never answers is named, with the time it had, not
// reported as the transport's timeout of request code 105.
func TestSilentNamesrvInUserTerms(t *testing.T) {
	old := startTimeout
	startTimeout = 500 * time.Millisecond
	t.Cleanup(func() { startTimeout = old })
	silent := clitest.SilentServer(t)
	code, _, stderr := runHere(t, silent, "--topic", "t", "--log-level", "error")
	want := "consumer: topic t: no answer from name server " + silent + " within 500ms"
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "code 105") {
		t.Fatalf("exit %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
}

// A fast consume of a backlog pauses pulls for flow control: normal, so
// not a warning at the default log level (it is there at info).
func TestFlowControlIsNotAWarning(t *testing.T) {
	cl := cluster.Start(t)
	const topic, n = "backlog", 1500
	createTopic(t, cl, topic, 1)
	pcfg := client.DefaultProducerConfig()
	pcfg.Group = "backlog-producer"
	pcfg.Client.NameServerAddrs = []string{cl.NamesrvAddr()}
	pcfg.Client.InstanceName = "flow-test-producer"
	prod, err := client.NewProducer(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := prod.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 100 {
		batch := make([]*client.Message, 100)
		for j := range batch {
			batch[j] = &client.Message{Topic: topic, Body: []byte("m")}
		}
		if _, err := prod.Send(context.Background(), batch...); err != nil {
			t.Fatal(err)
		}
	}
	_ = prod.Shutdown(context.Background())

	// A slow reader of stdout, so the pulls run ahead of the printing.
	slowRun := func(args ...string) string {
		var errOut clitest.Buffer
		code := run(context.Background(), append([]string{"--topic", topic, "--from", "first", "--idle-timeout", "1s", "-o", "json"}, args...), env{
			getenv: func(string) string { return cl.NamesrvAddr() },
			stdout: slowWriter{}, stderr: &errOut,
		})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		return errOut.String()
	}
	info := slowRun("--log-level", "info")
	if !strings.Contains(info, "flow control: pull paused") {
		t.Skipf("flow control did not engage in this run (stderr %d bytes)", len(info))
	}
	warn := slowRun()
	if strings.Contains(warn, "flow control") {
		t.Fatalf("flow control logged at the default level:\n%s", warn)
	}
}

// slowWriter takes a millisecond per write.
type slowWriter struct{}

func (slowWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return len(p), nil
}
