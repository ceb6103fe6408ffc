// Command bench runs one workload side by side against Runnel with its own
// client, an embedded NATS JetStream server, and Runnel with the official
// RocketMQ Go client, alternating the systems run after run so that a
// machine's changing load falls on all of them alike, and prints each run's
// produce and consume msg/s and the median ratios against NATS.
//
// The workload (Workload): -msgs bodies of -size bytes sent by -producers
// goroutines sharing one client, each send synchronous; then one consumer
// drains them. Each run starts its server fresh on loopback, with its store
// in a new temporary directory, and stops it after. Produce time runs from
// the first send to the last answer; consume time from the consumer's
// creation to the last delivery.
//
// It lives in a module of its own so that the main module does not depend
// on nats-server. scripts/bench-compare.sh [N] [K] runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runnelmq/runnel/remoting"
)

func main() {
	w := Workload{}
	flag.IntVar(&w.Msgs, "msgs", 100000, "messages per run")
	flag.IntVar(&w.Size, "size", 1024, "body size in bytes")
	flag.IntVar(&w.Producers, "producers", 16, "goroutines sending synchronously")
	flag.DurationVar(&w.Timeout, "timeout", 5*time.Minute, "longest produce or consume phase")
	runs := flag.Int("runs", 3, "rounds; each runs every system once")
	only := flag.String("systems", "runnel,nats,official", "systems to run, in order: runnel, nats, official, runnel-batch, runnel-topics; a Runnel system may name its transport, as runnel@netpoll")
	transport := flag.String("transport", defaultTransport, "the in-process Runnel cluster's remoting transport where a system names none: std or netpoll")
	batch := flag.Int("batch", 32, "messages per send of the runnel-batch system")
	topics := flag.Int("topics", 1000, "topics (8 queues each) the runnel-topics system spreads its sends over; it does not consume")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (every system, server and client: they share this process) to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file when it ends")
	traceFile := flag.String("trace", "", "write an execution trace of the whole run to this file (go tool trace; keep -msgs small)")
	flag.Parse()
	systems, err := pickSystems(*only, *batch, *topics, *transport)
	if err == nil && (w.Msgs < 1 || w.Size < 1 || w.Producers < 1 || *runs < 1) {
		err = fmt.Errorf("-msgs, -size, -producers and -runs must be at least 1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	for _, r := range []struct {
		path        string
		start, stop func(io.Writer) error
	}{
		{*cpuProfile, pprof.StartCPUProfile, func(io.Writer) error { pprof.StopCPUProfile(); return nil }},
		{*traceFile, trace.Start, func(io.Writer) error { trace.Stop(); return nil }},
		{*memProfile, func(io.Writer) error { runtime.MemProfileRate = 4096; return nil },
			func(w io.Writer) error { return pprof.Lookup("allocs").WriteTo(w, 0) }},
	} {
		done, err := record(r.path, r.start, r.stop)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer done()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Printf("%d msgs of %d bytes, %d synchronous producers, one consumer; %d rounds of %s\n",
		w.Msgs, w.Size, w.Producers, *runs, *only)
	rounds, err := compare(ctx, os.Stdout, w, systems, *runs)
	if len(rounds) > 0 {
		summarize(os.Stdout, rounds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func pickSystems(list string, batch, topics int, transport string) ([]System, error) {
	var out []System
	for _, name := range strings.Split(list, ",") {
		name, tr, _ := strings.Cut(strings.TrimSpace(name), "@")
		if tr == "" {
			tr = transport
		}
		if tr != remoting.TransportStd && tr != remoting.TransportNetpoll {
			return nil, fmt.Errorf("-systems %s@%s / -transport: unknown transport %q (want std or netpoll)", name, tr, tr)
		}
		if name == "nats" && tr != transport {
			return nil, fmt.Errorf("-systems: nats@%s: a transport is Runnel's", tr)
		}
		switch name {
		case "runnel":
			out = append(out, &runnelSystem{Transport: tr})
		case "runnel-batch":
			if batch < 2 {
				return nil, fmt.Errorf("-batch must be at least 2 for runnel-batch")
			}
			out = append(out, &runnelSystem{Batch: batch, Transport: tr})
		case "runnel-topics":
			if topics < 2 {
				return nil, fmt.Errorf("-topics must be at least 2 for runnel-topics")
			}
			out = append(out, &runnelSystem{Topics: topics, Transport: tr})
		case "nats":
			out = append(out, natsSystem{})
		case "official":
			out = append(out, &officialSystem{Transport: tr})
		default:
			return nil, fmt.Errorf("-systems: unknown system %q (want runnel, nats, official, runnel-batch, runnel-topics)", name)
		}
	}
	return out, nil
}

// compare runs every system once per round, printing each result as it
// comes, and returns the complete rounds.
func compare(ctx context.Context, out io.Writer, w Workload, systems []System, runs int) ([][]Result, error) {
	var rounds [][]Result
	for k := range runs {
		var round []Result
		for _, s := range systems {
			dir, err := os.MkdirTemp("", "bench-"+s.Name()+"-")
			if err != nil {
				return rounds, err
			}
			res, err := s.Run(ctx, dir, w)
			_ = os.RemoveAll(dir)
			if err != nil {
				return rounds, fmt.Errorf("round %d, %s: %w", k+1, s.Name(), err)
			}
			consumed := "       -"
			if res.Consume.Wall > 0 {
				consumed = fmt.Sprintf("%8.0f msg/s %5.1f µs CPU/msg", res.ConsumeRate(), res.ConsumeCPU())
			}
			// GOMAXPROCS as the run left it: a Runnel server's start adds a P
			// for netpoll's poller (remoting's addPollerProcs), and the systems
			// after it in this process run with that too.
			fmt.Fprintf(out, "round %d  %-17s produce %8.0f msg/s %5.1f µs CPU/msg  consume %s  GOMAXPROCS %d\n", k+1, res.System, res.ProduceRate(), res.ProduceCPU(), consumed, runtime.GOMAXPROCS(0))
			round = append(round, res)
		}
		rounds = append(rounds, round)
	}
	return rounds, nil
}

// summarize prints each system's median rates and its median ratios to
// NATS and to plain runnel on the same transport in the same round (when
// they ran; the runnel-batch and runnel-topics goals are ratios to plain
// runnel).
func summarize(out io.Writer, rounds [][]Result) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "median of %d\tproduce msg/s\tconsume msg/s\tproduce vs nats\tconsume vs nats\tproduce vs runnel\tCPU µs/msg produce\tconsume\n", len(rounds))
	for i, first := range rounds[0] {
		var prod, cons, prodRatio, consRatio, runnelRatio, prodCPU, consCPU []float64
		for _, round := range rounds {
			r := round[i]
			prod, cons = append(prod, r.ProduceRate()), append(cons, r.ConsumeRate())
			prodCPU, consCPU = append(prodCPU, r.ProduceCPU()), append(consCPU, r.ConsumeCPU())
			if n, ok := find(round, "nats"); ok {
				prodRatio = append(prodRatio, r.ProduceRate()/n.ProduceRate())
				if r.Consume.Wall > 0 {
					consRatio = append(consRatio, r.ConsumeRate()/n.ConsumeRate())
				}
			}
			if n, ok := find(round, plainRunnel(r.System)); ok {
				runnelRatio = append(runnelRatio, r.ProduceRate()/n.ProduceRate())
			}
		}
		consumed := "-"
		if m := median(cons); m > 0 {
			consumed = fmt.Sprintf("%.0f", m)
		}
		consumedCPU := "-"
		if m := median(consCPU); m > 0 {
			consumedCPU = fmt.Sprintf("%.1f", m)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%.1f\t%s\n", first.System, median(prod), consumed, ratio(prodRatio), ratio(consRatio), ratio(runnelRatio), median(prodCPU), consumedCPU)
	}
	_ = tw.Flush()
}

// plainRunnel names the plain runnel system on system's transport.
func plainRunnel(system string) string {
	_, tr, _ := strings.Cut(system, "@")
	return withTransport("runnel", tr)
}

func find(round []Result, system string) (Result, bool) {
	for _, r := range round {
		if r.System == system {
			return r, true
		}
	}
	return Result{}, false
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ratio(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", median(v))
}

// record starts writing a profile or trace to path (nothing when path is
// empty); the func it returns stops it and closes the file.
func record(path string, start, stop func(io.Writer) error) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		return nil, err
	}
	return func() {
		err := stop(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}, nil
}
