// Command bench runs one workload side by side against Runnel with its own
// client, NATS JetStream, Runnel with the official RocketMQ Go client and
// Runnel with the RocketMQ 5 Go SDK through its gRPC door, alternating the
// systems run after run so that a machine's changing load falls on all of
// them alike, and prints each run's produce and consume msg/s and CPU per
// message and the median ratios against NATS and Runnel.
//
// Two topologies (-topology): "inprocess" (the default) runs every broker
// in this process beside its clients, and the CPU is the whole process's;
// "process" runs each broker in a process of its own on loopback, as users
// run them (`runnel dev`; nats-server with its file store), built at the
// start, and gives the broker process's CPU per message beside this
// process's, the clients'. The clients run here in both.
//
// The workload (Workload): -msgs bodies of -size bytes sent by -producers
// goroutines sharing one client, each send synchronous; then one consumer
// drains them. Each run starts its server fresh on loopback, with its store
// in a new temporary directory, and stops it after. Produce time runs from
// the first send to the last answer; consume time from the consumer's
// creation to the last delivery.
//
// runnel-raft3 runs the same workload against a replicated group of three
// brokers (group.go): in this process over raft's in-memory transport, or
// as a name server and three broker processes from DLedger-style
// broker.conf files; its "vs runnel" ratios are issue 39's goals for a
// group.
//
// It lives in a module of its own so that the main module does not depend
// on nats-server. scripts/bench-compare.sh [N] [K] runs it.
package main

import (
	"cmp"
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

func main() { os.Exit(run()) }

// run is main, returning its exit code once its deferred calls (profiles,
// the built binaries) are done.
func run() int {
	w := Workload{}
	flag.IntVar(&w.Msgs, "msgs", 100000, "messages per run")
	flag.IntVar(&w.Size, "size", 1024, "body size in bytes")
	flag.IntVar(&w.Producers, "producers", 16, "goroutines sending synchronously")
	flag.Float64Var(&w.Rate, "rate", 0, "cap the sends at this many messages a second in all (0: as fast as the producers go), so that every system's broker carries the same load")
	flag.DurationVar(&w.Timeout, "timeout", 5*time.Minute, "longest produce or consume phase")
	runs := flag.Int("runs", 3, "rounds; each runs every system once")
	only := flag.String("systems", "runnel,nats,official", "systems to run, in order: runnel, nats, official, v5, runnel-batch, runnel-topics, runnel-raft3; in process, a Runnel system may name its transport, as runnel@netpoll")
	topo := flag.String("topology", topologyInProcess, "where the brokers run: inprocess (in this process, beside their clients) or process (each in a process of its own, built at the start)")
	runnelBin := flag.String("runnel-bin", "", "with -topology process: the runnel binary to run `runnel dev` from (default: built from the main module)")
	natsBin := flag.String("nats-bin", "", "with -topology process: the nats-server binary to run (default: built at the version this module requires)")
	namesrvBin := flag.String("namesrv-bin", "", "with -topology process: the namesrv binary of runnel-raft3's name server (default: built from the main module)")
	brokerBin := flag.String("broker-bin", "", "with -topology process: the broker binary runnel-raft3's nodes run (default: built from the main module)")
	transport := flag.String("transport", defaultTransport, "the in-process Runnel cluster's remoting transport where a system names none: std or netpoll (a broker process serves netpoll)")
	batch := flag.Int("batch", 32, "messages per send of the runnel-batch system")
	topics := flag.Int("topics", 1000, "topics (8 queues each) the runnel-topics system spreads its sends over; it does not consume")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (every system, server and client where they share this process) to this file")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file when it ends")
	traceFile := flag.String("trace", "", "write an execution trace of the whole run to this file (go tool trace; keep -msgs small)")
	flag.Parse()
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return code
	}
	if w.Msgs < 1 || w.Size < 1 || w.Producers < 1 || *runs < 1 {
		return fail(2, fmt.Errorf("-msgs, -size, -producers and -runs must be at least 1"))
	}
	if w.Rate < 0 {
		return fail(2, fmt.Errorf("-rate %v: want 0 (no cap) or more", w.Rate))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var t topology
	switch {
	case *topo == topologyProcess:
		var done func()
		var err error
		if t, done, err = processTopology(ctx, topology{RunnelBin: *runnelBin, NATSBin: *natsBin, NamesrvBin: *namesrvBin, BrokerBin: *brokerBin}); err != nil {
			return fail(2, err)
		}
		defer done()
	case *topo != topologyInProcess:
		return fail(2, fmt.Errorf("-topology %q: want inprocess or process", *topo))
	case *runnelBin != "" || *natsBin != "" || *namesrvBin != "" || *brokerBin != "":
		return fail(2, fmt.Errorf("-runnel-bin, -nats-bin, -namesrv-bin and -broker-bin are for -topology process"))
	}
	systems, err := pickSystems(*only, *batch, *topics, *transport, t)
	if err != nil {
		return fail(2, err)
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
			return fail(2, err)
		}
		defer done()
	}
	rate := ""
	if w.Rate > 0 {
		rate = fmt.Sprintf(" at most %g msg/s,", w.Rate)
	}
	fmt.Printf("%d msgs of %d bytes, %d synchronous producers,%s one consumer; %d rounds of %s; topology %s\n",
		w.Msgs, w.Size, w.Producers, rate, *runs, *only, t)
	rounds, err := compare(ctx, os.Stdout, w, systems, *runs)
	if len(rounds) > 0 {
		summarize(os.Stdout, rounds)
	}
	if err != nil {
		return fail(1, err)
	}
	return 0
}

// processTopology gives the process topology its binaries: those given,
// and the others built into a temporary directory that done removes.
func processTopology(ctx context.Context, given topology) (t topology, done func(), err error) {
	done = func() {}
	if given.RunnelBin == "" || given.NATSBin == "" || given.NamesrvBin == "" || given.BrokerBin == "" {
		dir, err := os.MkdirTemp("", "bench-bin-")
		if err != nil {
			return t, nil, err
		}
		done = func() { _ = os.RemoveAll(dir) }
		fmt.Fprintln(os.Stderr, "bench: building runnel and nats-server for -topology process")
		if t, err = buildBinaries(ctx, dir); err != nil {
			done()
			return t, nil, err
		}
	}
	t.RunnelBin, t.NATSBin = cmp.Or(given.RunnelBin, t.RunnelBin), cmp.Or(given.NATSBin, t.NATSBin)
	t.NamesrvBin, t.BrokerBin = cmp.Or(given.NamesrvBin, t.NamesrvBin), cmp.Or(given.BrokerBin, t.BrokerBin)
	return t, done, nil
}

// pickSystems makes the systems -systems names, in its order, on topology
// t. A transport is the in-process cluster's: a broker process serves its
// default, netpoll.
func pickSystems(list string, batch, topics int, transport string, t topology) ([]System, error) {
	var out []System
	for _, name := range strings.Split(list, ",") {
		name, tr, _ := strings.Cut(strings.TrimSpace(name), "@")
		if t.process() {
			if tr != "" {
				return nil, fmt.Errorf("-systems %s@%s: a transport is for -topology inprocess (the broker process serves netpoll)", name, tr)
			}
		} else {
			if tr == "" {
				tr = transport
			}
			if tr != remoting.TransportStd && tr != remoting.TransportNetpoll {
				return nil, fmt.Errorf("-systems %s@%s / -transport: unknown transport %q (want std or netpoll)", name, tr, tr)
			}
			if name == "nats" && tr != transport {
				return nil, fmt.Errorf("-systems: nats@%s: a transport is Runnel's", tr)
			}
		}
		switch name {
		case "runnel":
			out = append(out, &runnelSystem{Transport: tr, Topo: t})
		case "runnel-batch":
			if batch < 2 {
				return nil, fmt.Errorf("-batch must be at least 2 for runnel-batch")
			}
			out = append(out, &runnelSystem{Batch: batch, Transport: tr, Topo: t})
		case "runnel-raft3":
			out = append(out, &runnelSystem{Group: 3, Transport: tr, Topo: t})
		case "runnel-topics":
			if topics < 2 {
				return nil, fmt.Errorf("-topics must be at least 2 for runnel-topics")
			}
			out = append(out, &runnelSystem{Topics: topics, Transport: tr, Topo: t})
		case "nats":
			out = append(out, natsSystem{Topo: t})
		case "official":
			out = append(out, &officialSystem{Transport: tr, Topo: t})
		case "v5":
			out = append(out, &v5System{Transport: tr, Topo: t})
		default:
			return nil, fmt.Errorf("-systems: unknown system %q (want runnel, nats, official, v5, runnel-batch, runnel-topics, runnel-raft3)", name)
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
			fmt.Fprintln(out, roundLine(k+1, res))
			round = append(round, res)
		}
		rounds = append(rounds, round)
	}
	return rounds, nil
}

// roundLine is one run's result as compare prints it.
func roundLine(round int, res Result) string {
	if res.BrokerProcess {
		phase := func(rate, broker, clients float64) string {
			return fmt.Sprintf("%8.0f msg/s, µs/msg broker %5.1f clients %5.1f", rate, broker, clients)
		}
		consumed := "-"
		if res.Consume.Wall > 0 {
			consumed = phase(res.ConsumeRate(), res.BrokerConsumeCPU(), res.ConsumeCPU())
		}
		return fmt.Sprintf("round %d  %-17s produce %s  consume %s", round, res.System,
			phase(res.ProduceRate(), res.BrokerProduceCPU(), res.ProduceCPU()), consumed)
	}
	consumed := "       -"
	if res.Consume.Wall > 0 {
		consumed = fmt.Sprintf("%8.0f msg/s %5.1f µs CPU/msg", res.ConsumeRate(), res.ConsumeCPU())
	}
	// GOMAXPROCS as the run left it: a Runnel server's start adds a P for
	// netpoll's poller (remoting's addPollerProcs), and the systems after
	// it in this process run with that too.
	return fmt.Sprintf("round %d  %-17s produce %8.0f msg/s %5.1f µs CPU/msg  consume %s  GOMAXPROCS %d", round, res.System, res.ProduceRate(), res.ProduceCPU(), consumed, runtime.GOMAXPROCS(0))
}

// summarize prints each system's median rates and its median ratios to
// NATS and to plain runnel on the same transport in the same round (when
// they ran; the runnel-batch, runnel-topics and runnel-raft3 goals are
// ratios to plain runnel), and its median CPU per message. Where the brokers ran in
// processes of their own, that is the broker's, then this process's (the
// clients'), and "broker vs runnel" is the ratio of the broker's CPU per
// message stored and delivered to plain runnel's: the goals of the
// official client's and the gRPC door's costs (issues 39 and 34).
func summarize(out io.Writer, rounds [][]Result) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	process := rounds[0][0].BrokerProcess
	head := fmt.Sprintf("median of %d\tproduce msg/s\tconsume msg/s\tproduce vs nats\tconsume vs nats\tproduce vs runnel\tconsume vs runnel", len(rounds))
	if process {
		head += "\tbroker µs/msg produce\tconsume\tboth\tbroker vs runnel\tclients µs/msg produce\tconsume"
	} else {
		head += "\tCPU µs/msg produce\tconsume"
	}
	fmt.Fprintln(tw, head)
	for i, first := range rounds[0] {
		var prod, cons, prodRatio, consRatio, runnelRatio, runnelConsRatio, prodCPU, consCPU, brokerProd, brokerCons, broker, brokerRatio []float64
		for _, round := range rounds {
			r := round[i]
			prod, cons = append(prod, r.ProduceRate()), append(cons, r.ConsumeRate())
			prodCPU, consCPU = append(prodCPU, r.ProduceCPU()), append(consCPU, r.ConsumeCPU())
			brokerProd, brokerCons, broker = append(brokerProd, r.BrokerProduceCPU()), append(brokerCons, r.BrokerConsumeCPU()), append(broker, r.BrokerCPU())
			if n, ok := find(round, "nats"); ok {
				prodRatio = append(prodRatio, r.ProduceRate()/n.ProduceRate())
				if r.Consume.Wall > 0 {
					consRatio = append(consRatio, r.ConsumeRate()/n.ConsumeRate())
				}
			}
			if n, ok := find(round, plainRunnel(r.System)); ok {
				runnelRatio = append(runnelRatio, r.ProduceRate()/n.ProduceRate())
				// A run that only produced is set against runnel's produce.
				if r.Consume.Wall > 0 {
					runnelConsRatio = append(runnelConsRatio, r.ConsumeRate()/n.ConsumeRate())
					brokerRatio = append(brokerRatio, r.BrokerCPU()/n.BrokerCPU())
				} else {
					brokerRatio = append(brokerRatio, r.BrokerProduceCPU()/n.BrokerProduceCPU())
				}
			}
		}
		row := fmt.Sprintf("%s\t%.0f\t%s\t%s\t%s\t%s\t%s", first.System, median(prod), positive(median(cons), "%.0f"), ratio(prodRatio), ratio(consRatio), ratio(runnelRatio), ratio(runnelConsRatio))
		if process {
			row += fmt.Sprintf("\t%.1f\t%s\t%.1f\t%s", median(brokerProd), positive(median(brokerCons), "%.1f"), median(broker), ratio(brokerRatio))
		}
		row += fmt.Sprintf("\t%.1f\t%s", median(prodCPU), positive(median(consCPU), "%.1f"))
		fmt.Fprintln(tw, row)
	}
	_ = tw.Flush()
}

// positive formats v, or says "-" for a phase that did not run.
func positive(v float64, format string) string {
	if v > 0 {
		return fmt.Sprintf(format, v)
	}
	return "-"
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
