// Command consumer prints the messages of a topic, for debugging:
//
//	consumer --namesrv 127.0.0.1:9876 --topic orders --from first --max 10
//
// It is a push consumer of Runnel's client (package client), so it behaves
// as a member of a consumer group: by default a random one
// (runnel-consumer-<hex>), so that a debugging session never takes
// messages from a real group; --group joins a real one on purpose.
//
// Output: each message on stdout, as text (four lines, see appendText) or
// with --format json as one JSON object per line (see record). Everything
// else — the group in use, the final summary, client warnings and, when
// stderr is a terminal, a live line of throughput and lag — goes to stderr.
//
// It stops after --max messages, after --idle-timeout without a message,
// or on SIGINT/SIGTERM (a second one kills it). In every case the offsets
// of exactly the printed messages are committed before it exits (see
// session.run). Exit status: 0 after a stop, 1 with a one-line
// "consumer: ..." message on stderr after an error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/runnelmq/runnel/internal/cliflag"
	"github.com/runnelmq/runnel/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, the default action again: a second
		// Ctrl-C kills a shutdown that hangs.
		<-ctx.Done()
		stop()
	}()
	// With SIGPIPE noticed, a write to a closed stdout (consumer | head)
	// fails with EPIPE instead of killing the process, so the consumer
	// still shuts down and commits what it printed.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], env{
		getenv:         os.Getenv,
		stdout:         os.Stdout,
		stderr:         os.Stderr,
		stderrTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	})
	os.Exit(code)
}

// env is what a run takes from its process.
type env struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	stderrTerminal bool
}

// run executes the command line and returns the exit code: 0, or 1 with a
// one-line "consumer: ..." message on stderr.
func run(ctx context.Context, args []string, e env) (code int) {
	defer func() {
		// A bug must still end as a clear one-line error, not a stack dump.
		if p := recover(); p != nil {
			fmt.Fprintf(e.stderr, "consumer: internal error: %v\n", p)
			code = 1
		}
	}()
	cmd := newCommand(e)
	cmd.SetArgs(args)
	cmd.SetOut(e.stdout)
	cmd.SetErr(e.stderr)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(e.stderr, "consumer: %s\n", oneLine(err))
		return 1
	}
	return 0
}

// oneLine joins a multi-line error (errors.Join) into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

func newCommand(e env) *cobra.Command {
	defNamesrv := e.getenv("NAMESRV_ADDR")
	if defNamesrv == "" {
		defNamesrv = defaultNamesrv
	}
	var f flags
	cmd := &cobra.Command{
		Use:   "consumer --topic TOPIC [flags]",
		Short: "Print the messages of a RocketMQ/Runnel topic, for debugging",
		Long: `consumer prints the messages of a topic as a member of a consumer group.

By default the group is a new random one (runnel-consumer-<hex>, printed on
stderr at start), so debugging never takes messages from a real group; --group
joins a real group on purpose. --from is where a group without offsets starts,
and it is exact: for the random group, and for a --group that has no committed
offset on any queue of the topic yet, the offsets are placed where --from says
before consuming starts (a plain RocketMQ consumer of a new group would start a
young topic at its first message instead). A group that has offsets resumes
from them and --from does not apply.

A topic without a readable queue (perm without R; dead-letter topics are
write-only in RocketMQ) is refused with that reason and exit status 1.

Each message shows topic, broker, queue id, queue offset, msg id, offset msg
id, keys, tags, properties, times and the body. Text format: the body as it
is when it is one line of printable UTF-8, else labelled "quoted" and written
as a Go string literal (\n, \x00 ... escaped). JSON format (-o json): one object per line
with the fields topic, brokerName, queueId, queueOffset, msgId, offsetMsgId,
keys, tags, properties, bornTimestamp, storeTimestamp (ms), reconsumeTimes,
bodySize, and either body (printable UTF-8 text) or bodyBase64.

It stops after --max messages, after --idle-timeout without a message, or on
Ctrl-C/SIGTERM; the offsets of exactly the printed messages are committed
first. --max uses the orderly consume path, which can leave a message beyond
the limit unacknowledged. Stdout carries only messages; the group, warnings, a
final summary and, on a terminal, live throughput and lag go to stderr.

--tag filters by tag expression; --sql instead by a SQL92 condition over the
message properties (TAGS included), which the broker evaluates and which needs
a broker with property filtering (RocketMQ: enablePropertyFilter=true). The
two do not combine. --sql supports AND, OR, NOT, = <> > >= < <=, [NOT] BETWEEN,
[NOT] IN ('a', 'b'), IS [NOT] NULL, [NOT] CONTAINS / STARTSWITH / ENDSWITH,
TRUE, FALSE, 'strings' and numbers; not LIKE and not arithmetic. A message
without a property never matches a comparison with it.

The name server comes from -n/--namesrv, else NAMESRV_ADDR, else 127.0.0.1:9876.`,
		Example: `  # everything new on orders, until Ctrl-C
  consumer --topic orders
  # 10 messages from the oldest, then exit (oldest first within each queue;
  # the queues interleave, so these are not the topic's 10 oldest overall)
  consumer -n 127.0.0.1:9876 --topic orders --from first --max 10
  # only two tags, as JSON for jq, stop after 5s of silence
  consumer --topic orders --tag 'created || paid' -o json --idle-timeout 5s | jq .body
  # by message properties (SQL92; the broker filters)
  consumer --topic orders --sql "region = 'eu' AND amount > 100 AND TAGS <> 'test'"
  # what arrived in the last 15 minutes, or since a time
  consumer --topic orders --from 15m
  consumer --topic orders --from '2026-11-29 08:00:00'
  # every message, also those other members of the group get
  consumer --topic config-changes --broadcast`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q (the topic goes in --topic)", args[0])
			}
			return nil
		},
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.tagSet, f.sqlSet = cmd.Flags().Changed("tag"), cmd.Flags().Changed("sql")
			p, err := f.validate(time.Now())
			if err != nil {
				return err
			}
			s := &session{plan: p, stdout: e.stdout, stderr: e.stderr, terminal: e.stderrTerminal, now: time.Now}
			return s.run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.namesrv, "namesrv", "n", defNamesrv, "name server address(es), host:port;host:port (env NAMESRV_ADDR)")
	fl.StringVarP(&f.topic, "topic", "t", "", "topic to consume (required)")
	fl.StringVarP(&f.group, "group", "g", "", "consumer group (default: a random runnel-consumer-<hex>)")
	fl.StringVar(&f.tag, "tag", "*", "tag expression: * or 'TagA || TagB'")
	fl.StringVar(&f.sql, "sql", "", "SQL92 condition over message properties instead of --tag, e.g. \"a > 5 AND TAGS = 'TagA'\"")
	fl.StringVar(&f.from, "from", "last", "where a new group starts: last, first, a duration ago (15m), ms since the epoch, yyyyMMddHHmmss, RFC 3339 or '2006-01-02 15:04:05'")
	fl.BoolVar(&f.orderly, "orderly", false, "consume each queue in order (locks the queues at the broker)")
	fl.BoolVar(&f.broadcast, "broadcast", false, "broadcasting: get every message, offsets kept locally")
	fl.StringVarP(&f.format, "output", "o", "text", "output format: text or json")
	fl.StringVar(&f.format, "format", "text", "same as --output (its old name)")
	_ = fl.MarkHidden("format")
	fl.IntVar(&f.max, "max", 0, "exit after this many messages (0: no limit)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 0, "exit after this long without a message (0: never)")
	cliflag.Credentials(fl, &f.creds, e.getenv)
	fl.StringVar(&f.logLevel, "log-level", "warn", "client log level on stderr: debug, info, warn or error")
	fl.BoolVar(&f.tls, "tls", false, "connect over TLS (the servers' tls.server.mode must be permissive or enforcing)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "with --tls: verify servers against this PEM CA file (default: not verified, as the official clients)")
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetFlagErrorFunc(cliflag.FlagError)
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("from", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"last", "first"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}
