// Command consumer prints the messages of a topic, for debugging:
//
//	consumer --namesrv 127.0.0.1:9876 --topic orders --from first --max 10
//
// Without --group it reads the topic as mqadmin's consumeMessage does: it
// pulls every queue itself and commits nothing, so no consumer group comes
// to exist and a debugging session never takes messages from a real group
// (reader.go). With --group it is a push consumer of Runnel's client
// (package client), a member of that group committing what it printed.
// A topic that does not exist yet is waited for.
//
// Output: each message on stdout, as text (four lines, see appendText) or
// with --format json as one JSON object per line (see record). Everything
// else — how the topic is read, the final summary, client warnings and,
// when stderr is a terminal, a live line of throughput and lag — goes to
// stderr.
//
// It stops after --max messages, after --idle-timeout without a message,
// or on SIGINT/SIGTERM (a second one kills it). With a group, the offsets
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
		Long: `consumer prints the messages of a topic.

Without --group it reads the topic as mqadmin's consumeMessage does: it pulls
every queue itself, from where --from says, and commits nothing. No consumer
group comes to exist, so debugging sessions do not pile up in "runnelctl group
list" or in the brokers' metrics, and a real group's messages are never taken.
Two such consumers each print every message. (--orderly and --broadcast change
nothing then: each queue is read in order, and every message is printed.)

With --group it consumes as a member of that group (clustering, or
broadcasting with --broadcast): the group's queues are shared with its other
members and the printed messages' offsets are committed when it stops. --from
is where a group without offsets starts, and it is exact: for a group that has
no committed offset on any queue of the topic yet, the offsets are placed where
--from says before consuming starts (a plain RocketMQ consumer of a new group
would start a young topic at its first message instead). A group that has
offsets resumes from them and --from does not apply.

A topic that does not exist yet is waited for: the consumer says so once and
starts when the topic appears (a test run often starts the consumer before the
producer that creates the topic), reading it from its first message, since all
of it is newer than the consumer.

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
Ctrl-C/SIGTERM; with --group the offsets of exactly the printed messages are
committed first (--max then uses the orderly consume path, which can leave a
message beyond the limit unacknowledged). Stdout carries only messages; how the
topic is read, warnings, a final summary and, on a terminal, live throughput
and lag go to stderr.

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
  # as a member of a real group, committing what it printed
  consumer --topic orders --group billing-debug --max 10
  # every message, also those the group's other members get
  consumer --topic config-changes --group config-watch --broadcast`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q (the topic goes in --topic)", args[0])
			}
			return nil
		},
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
	fl.StringVarP(&f.group, "group", "g", "", "consume as a member of this group, committing what is printed (default: no group, nothing committed)")
	fl.StringVar(&f.tag, "tag", "*", "tag expression: * or 'TagA || TagB'")
	fl.StringVar(&f.sql, "sql", "", "SQL92 condition over message properties instead of --tag, e.g. \"a > 5 AND TAGS = 'TagA'\"")
	fl.StringVar(&f.from, "from", "last", "where reading (or a new group) starts: last, first, a duration ago (15m), ms since the epoch, yyyyMMddHHmmss, RFC 3339 or '2006-01-02 15:04:05'")
	fl.BoolVar(&f.orderly, "orderly", false, "with --group: consume each queue in order (locks the queues at the broker)")
	fl.BoolVar(&f.broadcast, "broadcast", false, "with --group: broadcasting, every message to every member, offsets kept locally")
	fl.StringVarP(&f.format, "output", "o", "text", "output format: text or json")
	fl.StringVar(&f.format, "format", "text", "same as --output (its old name)")
	_ = fl.MarkHidden("format")
	fl.IntVar(&f.max, "max", 0, "exit after this many messages (0: no limit)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 0, "exit after this long without a message (0: never)")
	cliflag.Credentials(fl, &f.creds, e.getenv)
	fl.StringVar(&f.logLevel, "log-level", "warn", "client log level on stderr: debug, info, warn or error")
	fl.BoolVar(&f.tls, "tls", false, "connect over TLS (the servers' tls.server.mode must be permissive or enforcing)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "with --tls: verify servers against this PEM CA file (default: not verified, as the official clients)")
	cliflag.Root(cmd, e.stdout, e.stderr)
	cmd.SetFlagErrorFunc(cliflag.FlagError)
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("from", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"last", "first"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}
