package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// A consumer group's dead letters: listing them and re-sending them to
// the topics they came from. Both read %DLQ%<group> with plain pulls from
// each queue's oldest offset and commit no offset, so a consumer that
// reads the dead-letter topic itself (brokers since RocketMQ 4.7 create it
// readable) is not disturbed.

func newDlqCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List a consumer group's dead letters, re-send them to their topics",
		Long: `A message a consumer group failed to consume more often than its max reconsume
times (16 by default) goes to the group's dead-letter topic %DLQ%<group>. Brokers
since RocketMQ 4.7 (and Runnel) create it readable: "runnelctl dlq list" shows
its messages, "runnelctl dlq resend" sends copies of them to their original
topics, and the consumer CLI reads it like any topic (--topic '%DLQ%<group>').`,
		Example: `  runnelctl dlq list --group billing
  runnelctl dlq resend --group billing --all`,
	}
	cmd.AddCommand(newDlqListCmd(a), newDlqResendCmd(a))
	return cmd
}

// deadLetterView is a dead letter as dlq list shows it: the message as
// message get shows it (all properties, bookkeeping included) and where it
// came from.
type deadLetterView struct {
	messageView
	OriginTopic string `json:"originTopic"`
	OriginMsgID string `json:"originMsgId"`
	StoreTime   string `json:"storeTime"`

	body []byte // for the table's preview
}

func deadLetterOf(m *protocol.MessageExt) deadLetterView {
	return deadLetterView{messageView: viewOf(m), OriginTopic: m.Property(protocol.PropertyRetryTopic),
		OriginMsgID: m.Property(protocol.PropertyOriginMessageID), StoreTime: msTime(m.StoreTimestamp), body: m.Body}
}

func newDlqListCmd(a *app) *cobra.Command {
	var (
		group string
		max   int
	)
	cmd := &cobra.Command{
		Use:   "list --group GROUP [--max N]",
		Short: "List a consumer group's dead letters",
		Long: `List the messages of the group's dead-letter topic %DLQ%<group>, oldest first per
queue, up to --max: each one's MSG ID (its client id, UNIQ_KEY, which it keeps
from the original) and OFFSET MSG ID (where the dead letter is stored), the
topic it was first sent to (RETRY_TOPIC), the original's offsetMsgId
(ORIGIN_MESSAGE_ID), how often it was reconsumed, when it was stored, its
tags, keys and the start of its body. -o json adds every property and the
whole body. No consumer group's offsets move.`,
		Example: `  runnelctl dlq list --group billing
  runnelctl dlq list --group billing --max 500 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("dlq list needs --group")
			}
			if max < 1 {
				return fmt.Errorf("--max %d: want at least 1", max)
			}
			return a.dlqList(cmd.Context(), group, max)
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "consumer group (required)")
	cmd.Flags().IntVar(&max, "max", admin.DefaultMaxMessages, "most dead letters to show")
	return cmd
}

func (a *app) dlqList(ctx context.Context, group string, max int) error {
	topic := admin.DLQTopic(group)
	var views []deadLetterView
	ranges, err := a.scanDLQ(ctx, topic, nil, func(m *client.MessageExt) bool {
		views = append(views, deadLetterOf(&m.MessageExt))
		return len(views) < max
	})
	total := held(ranges)
	if errors.Is(err, client.ErrTopicNotExist) {
		fmt.Fprintf(a.stderr, "group %s has no dead letters (no topic %s)\n", group, topic)
		err = nil
	}
	if err != nil {
		return err
	}
	if total > int64(len(views)) {
		fmt.Fprintf(a.stderr, "showing %d of %d dead letters of group %s (raise --max for more)\n", len(views), total, group)
	}
	if a.output == "json" {
		if views == nil {
			views = []deadLetterView{}
		}
		return writeJSON(a.stdout, views)
	}
	if len(views) == 0 {
		if total == 0 {
			fmt.Fprintf(a.stderr, "group %s has no dead letters in %s\n", group, topic)
		}
		return nil
	}
	t := newTable(a.stdout, "MSG ID", "OFFSET MSG ID", "ORIGINAL TOPIC", "ORIGINAL MSG ID", "RECONSUMED", "STORED", "TAGS", "KEYS", "BODY")
	for _, v := range views {
		t.row(dash(v.MsgID), v.OffsetMsgID, dash(v.OriginTopic), dash(v.OriginMsgID), v.ReconsumeTimes, v.StoreTime,
			dash(v.Tags), dash(strings.Join(v.Keys, " ")), preview(bodyText(v.body), 40))
	}
	return t.flush()
}

// dlqPullBatch is how many dead letters one pull asks for.
const dlqPullBatch = 32

// dlqRange is the part of one dead-letter queue a command reads: from lo
// up to (not including) hi.
type dlqRange struct {
	mq     queue.MessageQueue
	lo, hi int64
}

// scanDLQ pulls the queues of topic, handing each message to visit until
// visit returns false. Without ranges it reads every readable queue from
// its oldest offset up to its end when the scan begins, and returns those
// ranges, so that a second scan over them sees the same messages however
// many arrive meanwhile. An error matches client.ErrTopicNotExist when
// the topic has no route. Nothing is committed.
func (a *app) scanDLQ(ctx context.Context, topic string, ranges []dlqRange, visit func(*client.MessageExt) bool) ([]dlqRange, error) {
	cfg := client.DefaultPullConsumerConfig()
	cfg.Client = a.clientConfig("dlq")
	pc, err := client.NewPullConsumer(cfg)
	if err != nil {
		return nil, err
	}
	if err := pc.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = pc.Shutdown(context.Background()) }()
	if ranges == nil {
		if ranges, err = a.dlqRanges(ctx, pc, topic); err != nil {
			return nil, err
		}
	}
	for _, r := range ranges {
		for off := r.lo; off < r.hi; {
			res, err := pc.Pull(ctx, r.mq, off, min(dlqPullBatch, int(r.hi-off)), client.PullOptions{Expression: "*"})
			if err != nil {
				return nil, fmt.Errorf("pull %s at %d: %w", r.mq, off, err)
			}
			for _, m := range res.Messages {
				if m.QueueOffset >= r.hi {
					break
				}
				if !visit(m) {
					return ranges, nil
				}
			}
			if res.Status == client.PullNoNewMessage || res.NextOffset <= off {
				break // the queue ends (or was cut) short of hi
			}
			off = res.NextOffset
		}
	}
	return ranges, nil
}

// dlqRanges are the current extents of topic's readable queues.
func (a *app) dlqRanges(ctx context.Context, pc *client.PullConsumer, topic string) ([]dlqRange, error) {
	mqs, err := pc.MessageQueues(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, err)
	}
	if len(mqs) == 0 {
		// A dead-letter topic created by a broker before RocketMQ 4.7, or
		// by Runnel before it followed 4.7, is write-only.
		return nil, fmt.Errorf("topic %s has no readable queue: brokers before RocketMQ 4.7 create dead-letter topics write-only (perm W); runnelctl topic update-perm '%s' --perm RW makes it readable", topic, topic)
	}
	ranges := make([]dlqRange, 0, len(mqs))
	for _, mq := range mqs {
		lo, err := pc.MinOffset(ctx, mq)
		if err != nil {
			return nil, err
		}
		hi, err := pc.MaxOffset(ctx, mq)
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, dlqRange{mq: mq, lo: lo, hi: hi})
	}
	return ranges, nil
}

// held is how many messages ranges cover.
func held(ranges []dlqRange) int64 {
	var n int64
	for _, r := range ranges {
		n += r.hi - r.lo
	}
	return n
}

func newDlqResendCmd(a *app) *cobra.Command {
	var (
		group    string
		ids      []string
		all, yes bool
	)
	cmd := &cobra.Command{
		Use:   "resend --group GROUP (--id ID ... | --all) [--yes]",
		Short: "Send copies of a group's dead letters to their original topics",
		Long: `Send a copy of each dead letter named by --id (its MSG ID or OFFSET MSG ID, as dlq
list shows them), or of every one with --all, to the topic it was first sent to
(its RETRY_TOPIC property), and print each copy's new ids. A copy keeps the
body, flag, tags, keys and user properties; it leaves behind the retry and
dead-letter bookkeeping (RETRY_TOPIC, ORIGIN_MESSAGE_ID, REAL_TOPIC, REAL_QID,
RECONSUME_TIME, MAX_RECONSUME_TIMES), delay and timer properties (it is due at
once), transaction markers, and UNIQ_KEY: the copy gets a new message id, so
the dead letter and its copy stay apart in message get.

The copy goes to the topic, so every group subscribed to it gets it, not only
GROUP. The dead letters stay where they are (a RocketMQ topic cannot delete
single messages): running resend twice sends two copies. rocketmq-dashboard's
"resend" instead hands a dead letter to one online client of the group
(CONSUME_MESSAGE_DIRECTLY): that is "runnelctl message consume-directly".

Every id must name a dead letter of the group, or nothing is sent. On a terminal
it asks first; --yes (or stdin not being a terminal) skips the question.`,
		Example: `  runnelctl dlq resend --group billing --id AC11000100A418B4AAC2615FB1B80000
  runnelctl dlq resend --group billing --all --yes -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case group == "":
				return fmt.Errorf("dlq resend needs --group")
			case all && len(ids) > 0:
				return fmt.Errorf("--id and --all exclude each other")
			case !all && len(ids) == 0:
				return fmt.Errorf("dlq resend needs --id ID (repeatable) or --all")
			}
			return a.dlqResend(cmd.Context(), group, ids, all, yes)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "consumer group whose dead letters to re-send (required)")
	f.StringSliceVar(&ids, "id", nil, "MSG ID or OFFSET MSG ID of a dead letter (repeat or comma-separate)")
	f.BoolVar(&all, "all", false, "re-send every dead letter of the group")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// resentRow is one re-sent dead letter in the output.
type resentRow struct {
	DeadMsgID       string `json:"deadLetterMsgId"`
	DeadOffsetMsgID string `json:"deadLetterOffsetMsgId"`
	Topic           string `json:"topic"`
	MsgID           string `json:"msgId"`
	OffsetMsgID     string `json:"offsetMsgId"`
	Broker          string `json:"brokerName"`
	QueueID         int32  `json:"queueId"`
	QueueOffset     int64  `json:"queueOffset"`
}

// resendProducerGroup is the producer group re-sends are sent under.
const resendProducerGroup = "runnelctl-dlq"

// dlqResend reads the dead-letter topic twice over the same ranges: once
// to check every id and origin and to ask, keeping no bodies, then to send
// the copies as it reads, so that memory does not grow with the queue.
func (a *app) dlqResend(ctx context.Context, group string, ids []string, all, yes bool) error {
	topic := admin.DLQTopic(group)
	found := map[string]bool{} // by upper-case id
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			found[strings.ToUpper(id)] = false
		}
	}
	picks := func(m *client.MessageExt) bool {
		if all {
			return true
		}
		_, byID := found[strings.ToUpper(m.MsgID)]
		_, byOffset := found[strings.ToUpper(m.OffsetMsgID)]
		return byID || byOffset
	}
	picked := 0
	perTopic := map[string]int{}
	var bad error
	ranges, err := a.scanDLQ(ctx, topic, nil, func(m *client.MessageExt) bool {
		if !picks(m) {
			return true
		}
		picked++
		for _, id := range []string{m.MsgID, m.OffsetMsgID} {
			if _, ok := found[strings.ToUpper(id)]; ok {
				found[strings.ToUpper(id)] = true
			}
		}
		origin, err := admin.DeadLetterOrigin(&m.MessageExt)
		if err != nil {
			bad = err
			return false
		}
		perTopic[origin]++
		return true
	})
	switch {
	case errors.Is(err, client.ErrTopicNotExist) && all:
		fmt.Fprintf(a.stderr, "group %s has no dead letters (no topic %s): nothing to re-send\n", group, topic)
		return nil
	case errors.Is(err, client.ErrTopicNotExist):
		return fmt.Errorf("group %s has no dead letters (no topic %s)", group, topic)
	case err != nil:
		return err
	case bad != nil:
		// Every dead letter must have somewhere to go before any is sent.
		return fmt.Errorf("%w; nothing re-sent", bad)
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(found)) {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no dead letter with id %s in %s (ids are the MSG ID or OFFSET MSG ID dlq list shows); nothing re-sent",
			strings.Join(missing, ", "), topic)
	}
	if picked == 0 {
		fmt.Fprintf(a.stderr, "group %s has no dead letters in %s: nothing to re-send\n", group, topic)
		return nil
	}
	var dest []string
	for _, t := range slices.Sorted(maps.Keys(perTopic)) {
		dest = append(dest, fmt.Sprintf("%s (%d)", t, perTopic[t]))
	}
	if err := a.confirm(yes, fmt.Sprintf("Re-send %s of group %s to %s", plural(picked, "dead letter", "dead letters"), group, strings.Join(dest, ", "))); err != nil {
		return err
	}

	p, err := a.resendProducer(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	const rowFormat = "%-32s %-24s %-32s %-32s\n"
	start := time.Now()
	sent := 0
	var sendErr error
	_, err = a.scanDLQ(ctx, topic, ranges, func(m *client.MessageExt) bool {
		if !picks(m) {
			return true
		}
		var origin string
		if origin, sendErr = admin.DeadLetterOrigin(&m.MessageExt); sendErr != nil {
			return false
		}
		res, serr := p.Send(ctx, &client.Message{Topic: origin, Body: m.Body, Flag: m.Flag, Properties: admin.ResendProperties(&m.MessageExt)})
		if serr != nil {
			sendErr = fmt.Errorf("re-sent %d of %d; dead letter %s to %s: %w", sent, picked, m.OffsetMsgID, origin, serr)
			return false
		}
		sent++
		row := resentRow{DeadMsgID: m.MsgID, DeadOffsetMsgID: m.OffsetMsgID, Topic: origin, MsgID: res.MsgID,
			OffsetMsgID: res.OffsetMsgID, Broker: res.Queue.BrokerName, QueueID: res.Queue.QueueID, QueueOffset: res.QueueOffset}
		if a.output == "json" {
			sendErr = jsonLine{w: a.stdout}.write(row)
			return sendErr == nil
		}
		if sent == 1 {
			fmt.Fprintf(a.stdout, rowFormat, "DEAD LETTER MSG ID", "TOPIC", "NEW MSG ID", "NEW OFFSET MSG ID")
		}
		_, sendErr = fmt.Fprintf(a.stdout, rowFormat, dash(row.DeadMsgID), row.Topic, row.MsgID, row.OffsetMsgID)
		return sendErr == nil
	})
	if err := errors.Join(err, sendErr); err != nil {
		return err
	}
	if sent != picked {
		// The queue was cut (retention) between the two reads.
		return fmt.Errorf("re-sent %d of the %d dead letters found: the others left %s meanwhile", sent, picked, topic)
	}
	fmt.Fprintf(a.stderr, "re-sent %s of group %s to %s in %s\n", plural(sent, "dead letter", "dead letters"), group,
		plural(len(perTopic), "topic", "topics"), time.Since(start).Round(time.Millisecond))
	return nil
}

// resendProducer starts the producer copies are sent with.
func (a *app) resendProducer(ctx context.Context) (*client.Producer, error) {
	cfg := client.DefaultProducerConfig()
	cfg.Group = resendProducerGroup
	cfg.Client = a.clientConfig("dlq-send")
	if a.timeout > 0 {
		cfg.SendTimeout = a.timeout
	}
	p, err := client.NewProducer(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		_ = p.Shutdown(context.Background())
		return nil, err
	}
	return p, nil
}
