package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testnet"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// benchJSON runs a bench command with -o json against namesrv and decodes
// its report.
func benchJSON(t *testing.T, namesrv string, args ...string) benchReport {
	t.Helper()
	r := runCLI(t, map[string]string{"NAMESRV_ADDR": namesrv}, "", append(args, "-o", "json")...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	var rep benchReport
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%v: stdout %q is not one report: %v", args, r.stdout, err)
	}
	return rep
}

// checkPhase checks a side of a report: its counts and that its figures are
// consistent.
func checkPhase(t *testing.T, name string, p *phaseReport, msgs, size, calls int64) {
	t.Helper()
	if p == nil {
		t.Fatalf("%s: missing from the report", name)
	}
	if p.Msgs != msgs || p.Bytes != msgs*size || p.Latency.Count != calls {
		t.Fatalf("%s: %d msgs, %d bytes, %d timings; want %d, %d, %d", name, p.Msgs, p.Bytes, p.Latency.Count, msgs, msgs*size, calls)
	}
	l := p.Latency
	if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Fatalf("%s: percentiles out of order or zero: %+v", name, l)
	}
	if p.Seconds <= 0 || p.MsgsPerSec <= 0 || p.MBPerSec <= 0 {
		t.Fatalf("%s: no throughput: %+v", name, p)
	}
	// No send call outlasts the run (the histogram rounds up by < 0.1%).
	if l.Of == "send" && float64(l.Max) > p.Seconds*1e6*1.001+1 {
		t.Fatalf("%s: a send of %dµs in a run of %.6fs", name, l.Max, p.Seconds)
	}
}

func TestBenchProduceThenConsume(t *testing.T) {
	cl := cluster.Start(t)
	ns := cl.NamesrvAddr()
	const topic = "bench-pc"

	// 3 producers in batches of 4: 500 messages are 125 send calls.
	rep := benchJSON(t, ns, "bench", "produce", "--topic", topic, "--msgs", "500", "--size", "100", "--producers", "3", "--batch", "4")
	if rep.Consume != nil {
		t.Fatalf("produce reported a consume side: %+v", rep.Consume)
	}
	checkPhase(t, "produce", rep.Produce, 500, 100, 125)
	if rep.Produce.Batch != 4 || rep.Produce.Clients != 3 || rep.Produce.Async {
		t.Fatalf("produce: %+v", rep.Produce)
	}
	rep = benchJSON(t, ns, "bench", "produce", "--topic", topic, "--msgs", "300", "--size", "100", "--async", "--inflight", "8")
	checkPhase(t, "async produce", rep.Produce, 300, 100, 300)
	// 2 producers of 8 senders each: 16 sends in flight over 2 connections,
	// so the broker reads several at once and stores them with one write
	// (one send in flight per producer would take a write each).
	syncs := cl.Broker(0).Store().Stats().Syncs
	rep = benchJSON(t, ns, "bench", "produce", "--topic", topic, "--msgs", "200", "--size", "100", "--producers", "2", "--senders", "8")
	checkPhase(t, "senders produce", rep.Produce, 200, 100, 200)
	if rep.Produce.Clients != 2 {
		t.Fatalf("senders produce: %+v", rep.Produce)
	}
	if n := cl.Broker(0).Store().Stats().Syncs - syncs; n >= 150 {
		t.Fatalf("200 sends of 8 senders per connection took %d store writes: were they in flight together?", n)
	}

	// A new group consumes every message once: one timing each.
	rep = benchJSON(t, ns, "bench", "consume", "--topic", topic, "--msgs", "1000", "--group", "bench_pc")
	if rep.Produce != nil {
		t.Fatalf("consume reported a produce side: %+v", rep.Produce)
	}
	checkPhase(t, "consume", rep.Consume, 1000, 100, 1000)

	// The group committed them: a second run finds nothing new.
	rep = benchJSON(t, ns, "bench", "consume", "--topic", topic, "--msgs", "0", "--duration", "1s", "--group", "bench_pc")
	if rep.Consume.Msgs != 0 || rep.Consume.MsgsPerSec != 0 {
		t.Fatalf("second consume: %+v", rep.Consume)
	}
}

func TestBenchRun(t *testing.T) {
	cl := cluster.Start(t)
	ns := cl.NamesrvAddr()
	const topic = "bench-run"
	// Messages of another run on the topic are consumed but not counted.
	benchJSON(t, ns, "bench", "produce", "--topic", topic, "--msgs", "50", "--size", "10")

	rep := benchJSON(t, ns, "bench", "run", "--topic", topic, "--msgs", "400", "--size", "256", "--producers", "2", "--group", "bench_run")
	checkPhase(t, "produce", rep.Produce, 400, 256, 400)
	checkPhase(t, "consume", rep.Consume, 400, 256, 400)
	if rep.Consume.Latency.Of != "end-to-end" || rep.Produce.Latency.Of != "send" {
		t.Fatalf("latency kinds %q, %q", rep.Produce.Latency.Of, rep.Consume.Latency.Of)
	}

	// Text output: both sides, throughput and every percentile, no bar
	// (stdout is not a terminal).
	r := runCLI(t, map[string]string{"NAMESRV_ADDR": ns}, "", "bench", "run", "--topic", topic, "--msgs", "0", "--duration", "300ms", "--group", "bench_run")
	if r.code != 0 {
		t.Fatalf("bench run: %+v", r)
	}
	for _, want := range []string{"produce  " + topic + ": producers 1, batch 1, sync\n", "consume  " + topic + ": consumers 1, group bench_run\n",
		"msg/s", "MB/s", "send latency: p50 ", "end-to-end latency: p50 ", " p99.9 ", " max "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	t.Logf("text output:\n%s", r.stdout)
	if strings.ContainsAny(r.stdout, "\r\x1b") {
		t.Errorf("a progress bar in non-terminal output: %q", r.stdout)
	}
}

// TestBenchInterrupted checks that Ctrl-C (the context's end) ends a run
// with the report of what was done, not an error.
func TestBenchInterrupted(t *testing.T) {
	cl := cluster.Start(t)
	const topic = "bench-int"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"bench", "produce", "--topic", topic, "--msgs", "0", "--duration", "1h", "--producers", "2", "-o", "json"},
			strings.NewReader(""), &out, &errOut, func(k string) string { return map[string]string{"NAMESRV_ADDR": cl.NamesrvAddr()}[k] })
	}()
	// Interrupt once the broker holds messages of the run.
	adm := cl.Admin(t)
	testwait.Until(t, 30*time.Second, "10 messages of the run stored", func() error {
		var stored int64
		qs, _ := adm.TopicStats(ctx, topic)
		for _, q := range qs {
			stored += q.MaxOffset
		}
		if stored < 10 {
			return fmt.Errorf("%d stored; stderr %q", stored, errOut.String())
		}
		return nil
	})
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d, stderr %q", c, errOut.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Produce == nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	if rep.Produce.Msgs < 10 || rep.Produce.Latency.Count != rep.Produce.Msgs {
		t.Fatalf("interrupted report: %+v", rep.Produce)
	}
	if !strings.Contains(errOut.String(), "interrupted") {
		t.Fatalf("stderr %q does not say the run was interrupted", errOut.String())
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "produce", "--msgs", "0"}, "--msgs 0 needs a --duration"},
		{[]string{"bench", "produce", "--msgs", "-1"}, "--msgs -1"},
		{[]string{"bench", "consume", "--duration", "-1s"}, "--duration -1s"},
		{[]string{"bench", "produce", "--size", "0"}, "--size 0: want 1 to"},
		{[]string{"bench", "produce", "--producers", "0"}, "--producers 0"},
		{[]string{"bench", "produce", "--batch", "0"}, "--batch 0"},
		{[]string{"bench", "produce", "--batch", "1024", "--size", "8192"}, "over the 4194304"},
		{[]string{"bench", "produce", "--inflight", "4"}, "--inflight needs --async"},
		{[]string{"bench", "produce", "--senders", "0"}, "--senders 0: want 1 to 1024"},
		{[]string{"bench", "produce", "--senders", "4", "--async"}, "--senders needs synchronous sends"},
		{[]string{"bench", "run", "--consumers", "0", "--producers", "0"}, "--producers 0: want 1 to 1024; --consumers 0"},
		{[]string{"bench", "consume", "--size", "10"}, "unknown flag: --size"},
		{[]string{"bench", "produce", "--topic", ""}, "--topic is empty"},
		{[]string{"bench", "consume", "--group", " "}, "--group is empty"},
		{[]string{"bench", "produce", "--queues", "0"}, "--queues 0"},
		{[]string{"bench", "produce", "--msgs", "ten"}, `--msgs "ten": want a whole number`},
		{[]string{"bench", "produce", "extra"}, "takes no arguments"},
		{[]string{"bench", "produce", "-o", "yaml"}, `--output "yaml"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			assertFailed(t, runCLI(t, nil, "", tc.args...), tc.want)
		})
	}
}

func TestBenchNoNamesrv(t *testing.T) {
	dead, dead2 := testnet.DeadAddr(t), testnet.DeadAddr(t)
	for _, cmd := range []string{"produce", "consume", "run"} {
		assertFailed(t, runCLI(t, nil, "", "bench", cmd, "--namesrv", dead, "--timeout", "500ms"), dead)
		assertFailed(t, runCLI(t, nil, "", "bench", cmd, "-n", dead, "--timeout", "500ms"), dead)
		assertFailed(t, runCLI(t, map[string]string{"NAMESRV_ADDR": dead2}, "", "bench", cmd, "--timeout", "500ms"), dead2)
	}
	assertFailed(t, runCLI(t, nil, "", "bench", "produce", "-n", " "), "--namesrv is empty")
}

func TestBenchBar(t *testing.T) {
	var count atomic.Int64
	count.Store(42)
	var off bytes.Buffer
	b := startBenchBar(&off, false, "produce", 100, &count)
	b.stop()
	if off.Len() != 0 {
		t.Fatalf("bar drawn while off: %q", off.String())
	}

	var on clitest.Buffer
	b = startBenchBar(&on, true, "produce", 100, &count)
	testwait.Until(t, testwait.Default, "the bar to show 42/100", func() error {
		if s := on.String(); !strings.Contains(s, "42/100") {
			return fmt.Errorf("bar %q", s)
		}
		return nil
	})
	b.stop()
	b.stop() // stop is idempotent
	if !strings.Contains(on.String(), "produce") {
		t.Fatalf("bar without its label: %q", on.String())
	}
}
