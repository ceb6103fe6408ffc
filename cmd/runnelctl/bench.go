package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/client/admin"
)

// benchFlags are the options of the `runnelctl bench` commands. A run ends
// when msgs messages are done or duration has passed, whichever comes
// first; zero means no bound (but one of them must be set).
type benchFlags struct {
	topic, group string
	msgs         int64
	size         int
	producers    int
	senders      int
	consumers    int
	batch        int
	async        bool
	inflight     int
	queues       int
	duration     time.Duration
}

// Bounds of the bench flags. maxBenchBatchBytes is RocketMQ's default
// maxMessageSize: a batch is one message on the wire.
const (
	maxBenchClients    = 1024
	maxBenchBatch      = 1024
	maxBenchBatchBytes = 4 << 20
	defaultBenchTopic  = "runnelctl-bench"
	defaultBenchGroup  = "runnelctl_bench"
)

func newBenchCmd(a *app) *cobra.Command {
	return nounCmd("bench", "Measure produce and consume throughput and latency", `Benchmark a Runnel or RocketMQ cluster with Runnel's client, as nats bench or
RocketMQ's benchmark tools do: produce, consume, or both at once (run). A run
ends after --msgs messages or --duration, whichever comes first.

Reported: messages and bytes (bodies only), msg/s and MB/s (1 MB = 10^6 bytes),
and latency percentiles p50, p90, p99, p99.9 and max from an HDR histogram
(microsecond resolution, 3 significant digits). produce measures each send call
(a batch is one call; with --async, from the call to its callback). consume and
run measure end to end: from the producer's clock when the message was made to
its delivery. runnelctl bench stamps that instant in nanoseconds into a
property; other messages fall back to their born timestamp (milliseconds). Across
machines the figure includes their clock difference.

The topic is created (--queues queues on every master of the only cluster) when
the name server does not know it. A progress bar is drawn while standard output
is a terminal. Ctrl-C ends a run early and reports what was done.`, `  runnelctl bench produce --topic bench --msgs 100000 --size 1024 --producers 16
  runnelctl bench consume --topic bench --msgs 100000 --group bench_c
  runnelctl bench run --topic bench2 --duration 30s --producers 4 --batch 32 -o json`,
		newBenchProduceCmd(a), newBenchConsumeCmd(a), newBenchRunCmd(a))
}

// Which flags a bench command has.
const (
	benchProduceFlags = 1 << iota
	benchConsumeFlags
)

func addBenchFlags(fl *pflag.FlagSet, f *benchFlags, which int) {
	fl.StringVarP(&f.topic, "topic", "t", defaultBenchTopic, "topic to use")
	fl.Int64Var(&f.msgs, "msgs", 100000, "messages in the run (0 = until --duration)")
	fl.DurationVar(&f.duration, "duration", 0, "longest run, e.g. 30s (0 = until --msgs)")
	fl.IntVar(&f.queues, "queues", 8, "queues per broker of the topic, when it has to be created")
	if which&benchProduceFlags != 0 {
		fl.IntVar(&f.size, "size", 128, "body size in bytes")
		fl.IntVar(&f.producers, "producers", 1, "concurrent producers, each with its own connection")
		fl.IntVar(&f.senders, "senders", 1, "goroutines per producer, each sending synchronously over the producer's connection (an application's threads sharing one producer)")
		fl.IntVar(&f.batch, "batch", 1, "messages per send call (more than 1: a batch)")
		fl.BoolVar(&f.async, "async", false, "send asynchronously, up to --inflight sends outstanding per producer")
		fl.IntVar(&f.inflight, "inflight", 64, "outstanding sends per producer with --async")
	}
	if which&benchConsumeFlags != 0 {
		fl.IntVar(&f.consumers, "consumers", 1, "push consumers in the group, each with its own connection")
	}
	group := "consumer group"
	if which == benchProduceFlags {
		group = "producer group"
	}
	fl.StringVarP(&f.group, "group", "g", defaultBenchGroup, group)
}

func newBenchProduceCmd(a *app) *cobra.Command {
	return newBenchModeCmd(a, benchProduceFlags, "produce", "Send messages as fast as the producers can", `Send --msgs messages of --size bytes from --producers producers, each sending
--batch messages per call, synchronously or with --async; report throughput and
the latency of each send call. With --senders N, N goroutines share each
producer's connection, each sending synchronously, as an application's
threads share one producer.`, `  runnelctl bench produce --msgs 100000 --size 1024 --producers 16
  runnelctl bench produce --msgs 100000 --size 1024 --producers 1 --senders 16
  runnelctl bench produce --duration 1m --batch 32 --async -o json`)
}

func newBenchConsumeCmd(a *app) *cobra.Command {
	return newBenchModeCmd(a, benchConsumeFlags, "consume", "Consume messages as fast as they are delivered", `Consume --msgs messages of --topic with --consumers push consumers of --group,
starting where the group left off (a new group: at the first message), and
report throughput and end-to-end latency. A group commits what it consumed, so
a second run with the same group starts after it. The time runs from the
consumers' start to the last delivery.`, `  runnelctl bench consume --msgs 100000 --group bench_c
  runnelctl bench consume --duration 10s --consumers 4 -o json`)
}

func newBenchRunCmd(a *app) *cobra.Command {
	return newBenchModeCmd(a, benchProduceFlags|benchConsumeFlags, "run", "Produce and consume at once", `Start --consumers push consumers of --group, then --producers producers, and
report both sides. The consumers count only this run's messages and end once
they have all of them (or at --duration, or 30s after the producers stopped).`, `  runnelctl bench run --msgs 100000 --size 1024 --producers 16
  runnelctl bench run --duration 30s --batch 32 --async -o json`)
}

// newBenchModeCmd is a bench command with the flags of which (produce,
// consume or both).
func newBenchModeCmd(a *app, which int, use, short, long, example string) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(cmd, which); err != nil {
				return err
			}
			return a.bench(cmd.Context(), f, which)
		},
	}
	addBenchFlags(cmd.Flags(), &f, which)
	return cmd
}

// validate checks the flags of a command with the given flag set.
func (f *benchFlags) validate(cmd *cobra.Command, which int) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(f.topic) == "" {
		bad("--topic is empty")
	}
	if strings.TrimSpace(f.group) == "" {
		bad("--group is empty")
	}
	switch {
	case f.msgs < 0:
		bad("--msgs %d: want 0 or more", f.msgs)
	case f.duration < 0:
		bad("--duration %s: want 0 or more", f.duration)
	case f.msgs == 0 && f.duration == 0:
		bad("--msgs 0 needs a --duration: a run needs an end")
	}
	if f.queues < 1 || f.queues > 1024 {
		bad("--queues %d: want 1 to 1024", f.queues)
	}
	if which&benchProduceFlags != 0 {
		if f.size < 1 || f.size > maxBenchBatchBytes {
			bad("--size %d: want 1 to %d bytes", f.size, maxBenchBatchBytes)
		}
		if f.producers < 1 || f.producers > maxBenchClients {
			bad("--producers %d: want 1 to %d", f.producers, maxBenchClients)
		}
		if f.senders < 1 || f.senders > maxBenchClients {
			bad("--senders %d: want 1 to %d", f.senders, maxBenchClients)
		} else if f.senders > 1 && f.async {
			bad("--senders needs synchronous sends: with --async a producer has --inflight sends outstanding")
		}
		if f.batch < 1 || f.batch > maxBenchBatch {
			bad("--batch %d: want 1 to %d", f.batch, maxBenchBatch)
		} else if f.size >= 1 && f.batch > 1 && f.batch*f.size > maxBenchBatchBytes {
			bad("--batch %d of --size %d is %d bytes a batch, over the %d a message may have", f.batch, f.size, f.batch*f.size, maxBenchBatchBytes)
		}
		if f.inflight < 1 || f.inflight > 65536 {
			bad("--inflight %d: want 1 to 65536", f.inflight)
		} else if cmd.Flags().Changed("inflight") && !f.async {
			bad("--inflight needs --async")
		}
	}
	if which&benchConsumeFlags != 0 && (f.consumers < 1 || f.consumers > maxBenchClients) {
		bad("--consumers %d: want 1 to %d", f.consumers, maxBenchClients)
	}
	return errors.Join(errs...)
}

// ensureBenchTopic creates the topic when the name server does not know it
// and waits until it has a route, so consumers can start on it.
func (a *app) ensureBenchTopic(ctx context.Context, f benchFlags) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	_, err = adm.TopicRoute(ctx, f.topic)
	if err == nil || !errors.Is(err, admin.ErrNotFound) {
		return err
	}
	if _, err := adm.CreateTopic(ctx, admin.TopicSpec{Topic: f.topic, ReadQueueNums: f.queues, WriteQueueNums: f.queues}); err != nil {
		return fmt.Errorf("create topic %s (create it with runnelctl topic create): %w", f.topic, err)
	}
	// A broker registers a new topic with the name servers on its own
	// schedule (Runnel at once, RocketMQ within its register interval).
	deadline := time.Now().Add(40 * time.Second)
	for {
		if _, err := adm.TopicRoute(ctx, f.topic); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("topic %s was created but has no route after 40s: %w", f.topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
