package main

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting"
)

// smoke is a workload small enough for a test run.
var smoke = Workload{Msgs: 300, Size: 1024, Producers: 4, Timeout: time.Minute}

// runSmoke runs the smoke workload on systems for two rounds and checks
// that every run moved every message and that the summary has a row each.
func runSmoke(t *testing.T, systems ...System) [][]Result {
	t.Helper()
	return runSmokeOf(t, smoke, systems...)
}

func runSmokeOf(t *testing.T, w Workload, systems ...System) [][]Result {
	t.Helper()
	var out bytes.Buffer
	rounds, err := compare(context.Background(), &out, w, systems, 2)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(rounds))
	}
	for _, round := range rounds {
		for i, r := range round {
			if r.System != systems[i].Name() || r.Msgs != w.Msgs || r.Produce.Wall <= 0 || r.Consume.Wall <= 0 || r.Produce.CPU <= 0 {
				t.Fatalf("result %+v", r)
			}
		}
	}
	summarize(&out, rounds)
	t.Logf("\n%s", out.String())
	for _, s := range systems {
		if strings.Count(out.String(), "  "+s.Name()+" ") != 2 {
			t.Errorf("want 2 rounds of %s in\n%s", s.Name(), out.String())
		}
	}
	return rounds
}

func TestSmokeRunnelAndNATS(t *testing.T) {
	runSmoke(t, &runnelSystem{}, &runnelSystem{Transport: remoting.TransportNetpoll}, natsSystem{})
}

// A replicated group of three in this process, over raft's in-memory
// transport, moves every message too.
func TestSmokeRunnelRaft3(t *testing.T) {
	runSmoke(t, &runnelSystem{}, &runnelSystem{Group: 3})
}

// The batch and topic-spread variants move every message too (the spread
// one only produces, so its consume time is 0 and runSmoke's check is
// done here by hand).
func TestSmokeRunnelBatchAndTopics(t *testing.T) {
	runSmoke(t, &runnelSystem{Batch: 32})
	res, err := (&runnelSystem{Topics: 20}).Run(context.Background(), t.TempDir(), smoke)
	if err != nil {
		t.Fatal(err)
	}
	if res.System != "runnel-topics20" || res.Msgs != smoke.Msgs || res.Produce.Wall <= 0 || res.Consume != (phase{}) {
		t.Fatalf("result %+v", res)
	}
}

func TestPickSystems(t *testing.T) {
	names := func(systems []System) string {
		var out []string
		for _, s := range systems {
			out = append(out, s.Name())
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		list, transport, want, err string
	}{
		{list: "runnel, nats,official", transport: "std", want: "runnel,nats,official"},
		{list: "runnel,runnel-raft3,runnel-raft3@netpoll", transport: "std", want: "runnel,runnel-raft3,runnel-raft3@netpoll"},
		{list: "runnel,runnel@netpoll,runnel-batch@netpoll,official@netpoll", transport: "std",
			want: "runnel,runnel@netpoll,runnel-batch32@netpoll,official@netpoll"},
		// Where -transport is netpoll, the names say so, and @std is the default's.
		{list: "runnel,runnel-topics,runnel@std,nats", transport: "netpoll", want: "runnel@netpoll,runnel-topics20@netpoll,runnel,nats"},
		{list: "runnel@quic", transport: "std", err: `unknown transport "quic"`},
		{list: "runnel", transport: "", err: `unknown transport ""`},
		{list: "nats@netpoll", transport: "std", err: "a transport is Runnel's"},
		{list: "kafka", transport: "std", err: `unknown system "kafka"`},
	} {
		systems, err := pickSystems(c.list, 32, 20, c.transport, topology{})
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("pickSystems(%q, %q): error %v, want one saying %q", c.list, c.transport, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("pickSystems(%q, %q): %v", c.list, c.transport, err)
		case c.err == "" && names(systems) != c.want:
			t.Errorf("pickSystems(%q, %q) = %s, want %s", c.list, c.transport, names(systems), c.want)
		}
	}
}

// Each row's "vs runnel" is to plain runnel on its own transport.
func TestSummaryRatiosByTransport(t *testing.T) {
	ph := func(wall time.Duration) phase { return phase{Wall: wall, CPU: time.Millisecond} }
	round := []Result{
		{System: "runnel", Msgs: 100, Produce: ph(time.Second)},
		{System: "runnel-batch32", Msgs: 100, Produce: ph(time.Second / 4)},
		{System: "runnel@netpoll", Msgs: 100, Produce: ph(2 * time.Second)},
		{System: "runnel-batch32@netpoll", Msgs: 100, Produce: ph(time.Second / 2)},
	}
	var out bytes.Buffer
	summarize(&out, [][]Result{round})
	want := map[string]string{"runnel": "1.00x", "runnel-batch32": "4.00x", "runnel@netpoll": "1.00x", "runnel-batch32@netpoll": "4.00x"}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Fields(line)
		if f[5] != want[f[0]] {
			t.Errorf("%s: produce vs runnel %s, want %s\n%s", f[0], f[5], want[f[0]], out.String())
		}
	}
}

func TestSummaryRatios(t *testing.T) {
	ph := func(wall, cpu time.Duration) phase { return phase{Wall: wall, CPU: cpu} }
	rounds := [][]Result{
		{{System: "runnel", Msgs: 100, Produce: ph(time.Second, 2*time.Millisecond), Consume: ph(time.Second, time.Millisecond)}, {System: "nats", Msgs: 100, Produce: ph(2*time.Second, 3*time.Millisecond), Consume: ph(time.Second/2, time.Millisecond)}},
		{{System: "runnel", Msgs: 100, Produce: ph(time.Second, 4*time.Millisecond), Consume: ph(time.Second, time.Millisecond)}, {System: "nats", Msgs: 100, Produce: ph(4*time.Second, 3*time.Millisecond), Consume: ph(time.Second/2, time.Millisecond)}},
		{{System: "runnel", Msgs: 100, Produce: ph(time.Second, 3*time.Millisecond), Consume: ph(time.Second, 3*time.Millisecond)}, {System: "nats", Msgs: 100, Produce: ph(3*time.Second, 3*time.Millisecond), Consume: ph(time.Second/2, time.Millisecond)}},
	}
	var out bytes.Buffer
	summarize(&out, rounds)
	want := "median of 3  produce msg/s  consume msg/s  produce vs nats  consume vs nats  produce vs runnel  consume vs runnel  CPU µs/msg produce  consume\n" +
		"runnel       100            100            3.00x            0.50x            1.00x              1.00x              30.0                10.0\n" +
		"nats         33             200            1.00x            1.00x            0.33x              2.00x              30.0                10.0\n"
	if out.String() != want {
		t.Fatalf("summary\n%s\nwant\n%s", out.String(), want)
	}
}

// In the process topology the summary gives the brokers' CPU and each
// one's ratio to plain runnel's, stored and delivered (stored alone for a
// run that only produced).
func TestSummaryProcessTopology(t *testing.T) {
	ph := func(broker time.Duration) phase {
		return phase{Wall: time.Second, CPU: time.Millisecond, Broker: broker}
	}
	round := []Result{
		{System: "runnel", Msgs: 1000, BrokerProcess: true, Produce: ph(10 * time.Millisecond), Consume: ph(2 * time.Millisecond)},
		{System: "v5", Msgs: 1000, BrokerProcess: true, Produce: ph(12 * time.Millisecond), Consume: ph(6 * time.Millisecond)},
		{System: "runnel-topics20", Msgs: 1000, BrokerProcess: true, Produce: ph(15 * time.Millisecond)},
	}
	var out bytes.Buffer
	summarize(&out, [][]Result{round})
	want := "median of 1      produce msg/s  consume msg/s  produce vs nats  consume vs nats  produce vs runnel  consume vs runnel  broker µs/msg produce  consume  both  broker vs runnel  clients µs/msg produce  consume\n" +
		"runnel           1000           1000           -                -                1.00x              1.00x              10.0                   2.0      12.0  1.00x             1.0                     1.0\n" +
		"v5               1000           1000           -                -                1.00x              1.00x              12.0                   6.0      18.0  1.50x             1.0                     1.0\n" +
		"runnel-topics20  1000           -              -                -                1.00x              -                  15.0                   -        15.0  1.50x             1.0                     -\n"
	if out.String() != want {
		t.Fatalf("summary\n%s\nwant\n%s", out.String(), want)
	}
}

// TestRate: with Rate, message i is not sent before i/Rate seconds from
// the first, and every message is sent once. (A lower bound only: how
// soon after its time a send goes is the machine's.)
func TestRate(t *testing.T) {
	w := Workload{Msgs: 21, Producers: 4, Rate: 200, Timeout: time.Minute}
	var sent atomic.Int64
	p, err := w.produce(context.Background(), nil, func(context.Context) error {
		sent.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := sent.Load(); n != 21 {
		t.Fatalf("%d sends, want 21", n)
	}
	if least := 100 * time.Millisecond; p.Wall < least {
		t.Fatalf("21 messages at 200/s took %v, want at least %v", p.Wall, least)
	}
}
