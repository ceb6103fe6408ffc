package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/runnelmq/runnel/bench/internal/proc"
)

// /proc/PID/stat and getrusage count the same CPU: this process's, read
// from /proc before and after getrusage, brackets it within what /proc's
// whole clock ticks lose (utime and stime each rounded down, and a tick
// to spare).
func TestProcCPUIsTheProcesssCPU(t *testing.T) {
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
	}
	before, err := proc.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self := processCPU()
	after, err := proc.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tick := proc.Tick()
	if self < before-tick || self > after+3*tick || before <= 0 {
		t.Fatalf("/proc says %v then %v, getrusage %v between (tick %v)", before, after, self, tick)
	}
}

// The process topology: runnel dev, nats-server and a replicated group
// (a name server and three broker processes) built and run as processes
// of their own. It builds both (a minute on a cold build
// cache), so it runs only when asked.
func TestSmokeProcessTopology(t *testing.T) {
	if os.Getenv("RUNNEL_BENCH_PROCESS") == "" {
		t.Skip("RUNNEL_BENCH_PROCESS=1 runs it: it builds runnel and nats-server")
	}
	topo, err := buildBinaries(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Enough messages that the brokers' CPU adds up to clock ticks.
	w := smoke
	w.Msgs = 3000
	rounds := runSmokeOf(t, w, &runnelSystem{Topo: topo}, natsSystem{Topo: topo}, &officialSystem{Topo: topo}, &runnelSystem{Group: 3, Topo: topo})
	var broker time.Duration
	for _, round := range rounds {
		for _, r := range round {
			if !r.BrokerProcess {
				t.Fatalf("%s: not in a process of its own", r.System)
			}
			broker += r.Produce.Broker + r.Consume.Broker
		}
	}
	if broker <= 0 {
		t.Fatalf("the broker processes used no CPU")
	}
}
