package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// sendFlags are the options of `runnelctl send`.
type sendFlags struct {
	topic, tag, group string
	keys              []string
	delay             int
	delayArg          string        // --delay as given: a level or a duration
	delayFor          time.Duration // --delay as a duration: a timer message
	deliverAt         string
	deliverTime       time.Time
	props             map[string]string
	quiet             bool
	batch             int
	// broker and queue pin every message to one queue (mqadmin
	// sendMessage -b -i); queue < 0: any.
	broker string
	queue  int
}

// sentRow is one sent message in the output.
type sentRow struct {
	Status      string `json:"status"`
	MsgID       string `json:"msgId"`
	OffsetMsgID string `json:"offsetMsgId"`
	Broker      string `json:"brokerName"`
	QueueID     int32  `json:"queueId"`
	QueueOffset int64  `json:"queueOffset"`
	// RecallHandle is a timer message's: message recall takes it.
	RecallHandle string `json:"recallHandle,omitempty"`
}

func newSendCmd(a *app) *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send --topic TOPIC [MESSAGE...]",
		Short: "Send messages",
		Long: `Send one message per argument, or, without arguments, one message per line of
standard input. Each message gets the same keys, tag, delay level and properties.
Prints each message's id (MSG ID: the client id producers report, UNIQ_KEY), its
offsetMsgId (the broker's id, which message get finds without --topic), and the
queue and offset it was stored at; --quiet prints none of that. A summary
"sent N in Xs, R msg/s" goes to stderr at the end.

--batch N sends N lines in one request (RocketMQ batch send: one queue for the
whole batch); a batch's row lists its ids comma-separated.

Delay levels are the broker's (its messageDelayLevel; RocketMQ's default table has
18: 1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h). A delayed message
waits in SCHEDULE_TOPIC_XXXX until it is due. A broker takes a level above its
highest as its highest, as RocketMQ does, without an error; send then warns on
stderr with the level the broker stored.

--delay with a unit ("90s", "1h30m") or --deliver-at TIME sends a timer message
instead (RocketMQ 5's TIMER_DELAY_MS / TIMER_DELIVER_MS): any delay up to the
broker's timerMaxDelaySec, 3 days by default. TIME is RFC 3339, milliseconds since
the epoch, "2006-01-02 15:04:05" (local) or mqadmin's 2006-01-02#15:04:05:000, as
the consumer's --from takes. A timer message's row ends with its RECALL HANDLE
(recallHandle with -o json): runnelctl message recall --topic TOPIC --handle
HANDLE withdraws it before it is due.`,
		Example: `  runnelctl send --topic orders "first order" "second order"
  runnelctl send --topic orders --keys order-42 --tag created '{"id":42}'
  seq 1 100 | runnelctl send --topic numbers
  seq 1 50000 | runnelctl send --topic numbers --batch 100 --quiet
  runnelctl send --topic reminders --delay 3 "in ten seconds"
  runnelctl send --topic reminders --delay 90s "in a minute and a half"
  runnelctl send --topic reminders --deliver-at 2026-12-24T18:00:00+01:00 "ho ho"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.topic == "" {
				return fmt.Errorf("send needs --topic")
			}
			// Only the broker knows its levels (they are configurable and
			// not in its config answer), so the upper end is checked after
			// the send: see checkDelay.
			if err := f.parseDelay(time.Now()); err != nil {
				return err
			}
			if f.batch < 1 || f.batch > 1024 {
				return fmt.Errorf("--batch %d: want 1..1024", f.batch)
			}
			if !cmd.Flags().Changed("queue") {
				f.queue = -1
			} else if f.broker == "" || f.queue < 0 {
				return fmt.Errorf("--queue needs --broker, and a queue id of 0 or more")
			}
			if f.batch > 1 && (f.delay > 0 || f.delayFor > 0 || !f.deliverTime.IsZero()) {
				return fmt.Errorf("--batch and --delay exclude each other (RocketMQ batches cannot be delayed)")
			}
			return a.send(cmd.Context(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.topic, "topic", "t", "", "topic to send to (required)")
	fl.StringSliceVarP(&f.keys, "keys", "k", nil, "message keys, indexed for runnelctl message query (repeat or comma-separate)")
	fl.StringVar(&f.tag, "tag", "", "message tag")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print no row per message, only the summary on stderr")
	fl.IntVar(&f.batch, "batch", 1, "messages per send request (1..1024)")
	fl.StringVar(&f.delayArg, "delay", "", "delay level: 1 up to the broker's highest (default table 1s 5s 10s 30s 1m ... 2h, 18 levels), 0 = none; or a delay with a unit (90s, 2h) for a timer message")
	fl.StringVar(&f.deliverAt, "deliver-at", "", "deliver at TIME (RFC 3339, ms since the epoch, 2006-01-02 15:04:05): a timer message")
	fl.StringVarP(&f.group, "group", "g", "runnelctl", "producer group")
	fl.StringToStringVar(&f.props, "property", nil, "user property key=value (repeatable)")
	fl.StringVarP(&f.broker, "broker", "b", "", "send only to this broker group's queues")
	fl.IntVarP(&f.queue, "queue", "i", 0, "with --broker: send only to this queue id")
	return cmd
}

// startProducer starts a producer of group for a command (role names its
// client instance), each call bounded by --timeout; sel nil is the
// default selector. The caller shuts it down.
func (a *app) startProducer(ctx context.Context, group, role string, sel client.QueueSelector) (*client.Producer, error) {
	cfg := client.DefaultProducerConfig()
	cfg.Group = group
	cfg.Client = a.clientConfig(role)
	cfg.Selector = sel
	if a.timeout > 0 {
		cfg.SendTimeout = a.timeout
	}
	p, err := client.NewProducer(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// progressEvery is how often send updates its progress line on a
// terminal.
var progressEvery = time.Second

// send sends every body with the client's producer and prints a row per
// message as it goes, so a long stdin stream shows progress.
func (a *app) send(ctx context.Context, f sendFlags, args []string) error {
	var sel client.QueueSelector
	if f.broker != "" {
		sel = pinnedQueue{broker: f.broker, queue: f.queue, n: new(atomic.Uint64)}
	}
	p, err := a.startProducer(ctx, f.group, "send", sel)
	if err != nil {
		return err
	}
	defer func() { _ = p.Shutdown(context.Background()) }()

	// Rows are written as each send completes, so a long stdin stream shows
	// progress; fixed widths keep them aligned without buffering (ids are
	// 32 hex digits).
	const rowFormat = "%-10s %-32s %-32s %-12s %5v %8v%s\n"
	timer := f.delayFor > 0 || !f.deliverTime.IsZero()
	sent, rows := 0, 0
	start := time.Now()
	checked := map[string]bool{} // brokers whose delay level checkDelay has seen
	lastProgress := start
	var pending []*client.Message
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		res, err := p.Send(ctx, pending...)
		if err != nil {
			if len(pending) == 1 {
				return fmt.Errorf("send message %d to %s: %w", sent+1, f.topic, err)
			}
			return fmt.Errorf("send messages %d..%d to %s: %w", sent+1, sent+len(pending), f.topic, err)
		}
		sent += len(pending)
		pending = pending[:0]
		if a.stderrTerminal && time.Since(lastProgress) >= progressEvery {
			lastProgress = time.Now()
			fmt.Fprintf(a.stderr, "\r\x1b[Ksent %d ...", sent)
		}
		if f.delay > 0 {
			a.checkDelay(ctx, checked, res.Queue.BrokerName, res.OffsetMsgID, f.delay)
		}
		if f.quiet {
			return nil
		}
		row := sentRow{Status: res.Status.String(), MsgID: res.MsgID, OffsetMsgID: res.OffsetMsgID,
			Broker: res.Queue.BrokerName, QueueID: res.Queue.QueueID, QueueOffset: res.QueueOffset, RecallHandle: res.RecallHandle}
		if a.output == "json" {
			// One JSON object per line, so a script can read results as
			// they come.
			return jsonLine{w: a.stdout}.write(row)
		}
		rows++
		if rows == 1 { // the header comes with the first row, so a failure prints nothing
			fmt.Fprintf(a.stdout, rowFormat, "STATUS", "MSG ID", "OFFSET MSG ID", "BROKER", "QUEUE", "OFFSET", cell(timer, "RECALL HANDLE"))
		}
		_, err = fmt.Fprintf(a.stdout, rowFormat, row.Status, row.MsgID, row.OffsetMsgID, row.Broker, row.QueueID, row.QueueOffset,
			cell(timer, dash(row.RecallHandle)))
		return err
	}
	sendOne := func(body string) error {
		pending = append(pending, &client.Message{Topic: f.topic, Body: []byte(body), Tags: f.tag, Keys: f.keys,
			DelayLevel: f.delay, DeliverAfter: f.delayFor, DeliverAt: f.deliverTime, Properties: f.props})
		if len(pending) < f.batch {
			return nil
		}
		return flush()
	}
	summary := func() {
		el := time.Since(start)
		rate := 0.0
		if el > 0 {
			rate = float64(sent) / el.Seconds()
		}
		if a.stderrTerminal {
			fmt.Fprint(a.stderr, "\r\x1b[K") // erase the progress line
		}
		fmt.Fprintf(a.stderr, "sent %d in %s, %.0f msg/s\n", sent, el.Round(time.Millisecond), rate)
	}
	if len(args) > 0 {
		for _, body := range args {
			if err := sendOne(body); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		summary()
		return nil
	}
	// stdin is read on its own goroutine so that Ctrl-C (ctx) stops a send
	// that waits for the next line of a terminal.
	stop := make(chan struct{})
	defer close(stop) // releases the reader however this returns
	lines, readErr := readLines(a.stdin, stop)
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted after %d messages: %w", sent, ctx.Err())
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return fmt.Errorf("read stdin after %d messages: %w", sent, err)
				}
				if err := flush(); err != nil {
					return err
				}
				if sent == 0 {
					return fmt.Errorf("no message to send: give messages as arguments or lines on stdin")
				}
				summary()
				return nil
			}
			if err := sendOne(line); err != nil {
				return err
			}
		}
	}
}

// cell is an optional last column of send's rows: " "+v when shown.
func cell(shown bool, v string) string {
	if !shown {
		return ""
	}
	return " " + v
}

// checkDelay warns on stderr when broker stored a delayed message at
// another level than asked: a broker clamps a level above its highest to
// its highest instead of refusing the send (RocketMQ does the same), so
// without this a mistyped level would silently mean the longest delay. It
// reads back the first delayed message stored on each broker, whose DELAY
// property holds the level in force. A failed read-back only skips the
// check: the send itself succeeded.
func (a *app) checkDelay(ctx context.Context, checked map[string]bool, broker, offsetMsgID string, want int) {
	if checked[broker] {
		return
	}
	checked[broker] = true
	adm, err := a.admin()
	if err != nil {
		return
	}
	m, err := adm.QueryMessageByID(ctx, offsetMsgID, "")
	if err != nil {
		return
	}
	if got := m.Properties[protocol.PropertyDelayTimeLevel]; got != "" && got != strconv.Itoa(want) {
		fmt.Fprintf(a.stderr, "runnelctl: warning: broker %s has no delay level %d; it stored the message at its highest level, %s\n",
			broker, want, got)
	}
}

// readLines sends the non-empty lines of r on the returned channel, which
// is closed at EOF or on a read error (then sent on errc), or when done is
// closed. The goroutine exits as soon as done is closed, unless it is
// blocked in a read, which the process exit ends.
func readLines(r io.Reader, done <-chan struct{}) (<-chan string, <-chan error) {
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if line == "" {
				continue
			}
			select {
			case lines <- line:
			case <-done:
				errc <- nil
				return
			}
		}
		errc <- sc.Err()
	}()
	return lines, errc
}

// parseDelay reads --delay (a level, or a duration with a unit) and
// --deliver-at, at most one of which may be given.
func (f *sendFlags) parseDelay(now time.Time) error {
	if f.delayArg != "" && f.deliverAt != "" {
		return fmt.Errorf("--delay and --deliver-at exclude each other")
	}
	if f.delayArg != "" {
		if n, err := strconv.Atoi(f.delayArg); err == nil {
			if n < 0 {
				return fmt.Errorf("--delay %d: want a delay level >= 1, or 0 for none", n)
			}
			f.delay = n
			return nil
		}
		d, err := time.ParseDuration(f.delayArg)
		if err != nil || d <= 0 {
			return fmt.Errorf("--delay %q: want a delay level (3) or a positive duration with a unit (90s, 1h30m)", f.delayArg)
		}
		f.delayFor = d
	}
	if f.deliverAt != "" {
		if _, err := time.ParseDuration(strings.TrimPrefix(f.deliverAt, "-")); err == nil {
			return fmt.Errorf("--deliver-at %q: want a point in time; for a delay use --delay %s", f.deliverAt, f.deliverAt)
		}
		t, err := parseTime(f.deliverAt, now)
		if err != nil {
			return fmt.Errorf("--deliver-at: %w", err)
		}
		f.deliverTime = t
	}
	return nil
}

// pinnedQueue selects the queues of one broker group, or one queue of it
// (send --broker, --queue). With none of them writable it returns the
// zero queue, which the broker refuses with a clear error.
type pinnedQueue struct {
	broker string
	queue  int // -1: any of the broker's
	n      *atomic.Uint64
}

func (p pinnedQueue) Select(_ *client.Message, mqs []queue.MessageQueue, _ string) queue.MessageQueue {
	var mine []queue.MessageQueue
	for _, mq := range mqs {
		if mq.BrokerName == p.broker && (p.queue < 0 || int(mq.QueueID) == p.queue) {
			mine = append(mine, mq)
		}
	}
	if len(mine) == 0 {
		return queue.MessageQueue{Topic: mqs[0].Topic, BrokerName: p.broker, QueueID: int32(max(p.queue, 0))}
	}
	return mine[int(p.n.Add(1)%uint64(len(mine)))]
}
