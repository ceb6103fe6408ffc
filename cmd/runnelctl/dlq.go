package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// A consumer group's dead letters: listing them and re-sending them to
// the topics they came from, with the admin client's DeadLetters,
// PlanResend and Resend (the console's too). They read %DLQ%<group> with
// tool pulls from each queue's oldest offset and commit no offset, so a
// consumer that reads the dead-letter topic itself (brokers since RocketMQ
// 4.7 create it readable) is not disturbed.

func newDlqCmd(a *app) *cobra.Command {
	return nounCmd("dlq", "List a consumer group's dead letters, re-send them to their topics", `A message a consumer group failed to consume more often than its max reconsume
times (16 by default) goes to the group's dead-letter topic %DLQ%<group>. Brokers
since RocketMQ 4.7 (and Runnel) create it readable: "runnelctl dlq list" shows
its messages, "runnelctl dlq resend" sends copies of them to their original
topics, and the consumer CLI reads it like any topic (--topic '%DLQ%<group>').`, `  runnelctl dlq list --group billing
  runnelctl dlq resend --group billing --all`,
		newDlqListCmd(a), newDlqResendCmd(a))
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
	adm, err := a.admin()
	if err != nil {
		return err
	}
	topic := admin.DLQTopic(group)
	msgs, total, err := adm.DeadLetters(ctx, group, max)
	if errors.Is(err, admin.ErrNotFound) {
		fmt.Fprintf(a.stderr, "group %s has no dead letters (no topic %s)\n", group, topic)
		err = nil
	}
	if err != nil {
		return dlqError(err, topic)
	}
	views := make([]deadLetterView, 0, len(msgs))
	for _, m := range msgs {
		views = append(views, deadLetterOf(m))
	}
	if total > int64(len(views)) {
		fmt.Fprintf(a.stderr, "showing %d of %d dead letters of group %s (raise --max for more)\n", len(views), total, group)
	}
	if a.output == "json" {
		return writeJSON(a.stdout, views)
	}
	if len(views) == 0 {
		if total == 0 && msgs != nil {
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

// dlqError adds runnelctl's way out to a dead-letter topic no one can read.
func dlqError(err error, topic string) error {
	if errors.Is(err, admin.ErrNotReadable) {
		return fmt.Errorf("%w; runnelctl topic update-perm '%s' --perm RW makes it readable", err, topic)
	}
	return err
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

// dlqResend plans the re-send (every dead letter picked is read and its
// origin checked, no body kept), asks, then sends the copies as it reads
// the same ranges again, so that memory does not grow with the queue.
func (a *app) dlqResend(ctx context.Context, group string, ids []string, all, yes bool) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	topic := admin.DLQTopic(group)
	plan, err := adm.PlanResend(ctx, group, ids, all)
	switch {
	case errors.Is(err, admin.ErrNotFound) && strings.Contains(err.Error(), "no dead letter with id"):
		return err
	case errors.Is(err, admin.ErrNotFound):
		return fmt.Errorf("group %s has no dead letters (no topic %s)", group, topic)
	case err != nil:
		return dlqError(err, topic)
	}
	if plan.Count == 0 {
		fmt.Fprintf(a.stderr, "group %s has no dead letters in %s: nothing to re-send\n", group, topic)
		return nil
	}
	if err := a.confirm(yes, fmt.Sprintf("Re-send %s of group %s to %s", plural(plan.Count, "dead letter", "dead letters"), group, plan.Destinations())); err != nil {
		return err
	}
	const rowFormat = "%-32s %-24s %-32s %-32s\n"
	start := time.Now()
	first := true
	sent, err := adm.Resend(ctx, plan, func(r admin.Resent) error {
		row := resentRow{DeadMsgID: r.DeadMsgID, DeadOffsetMsgID: r.DeadOffsetMsgID, Topic: r.Topic, MsgID: r.MsgID,
			OffsetMsgID: r.OffsetMsgID, Broker: r.Broker, QueueID: r.QueueID, QueueOffset: r.QueueOffset}
		if a.output == "json" {
			return jsonLine{w: a.stdout}.write(row)
		}
		if first {
			first = false
			fmt.Fprintf(a.stdout, rowFormat, "DEAD LETTER MSG ID", "TOPIC", "NEW MSG ID", "NEW OFFSET MSG ID")
		}
		_, err := fmt.Fprintf(a.stdout, rowFormat, dash(row.DeadMsgID), row.Topic, row.MsgID, row.OffsetMsgID)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "re-sent %s of group %s to %s in %s\n", plural(sent, "dead letter", "dead letters"), group,
		plural(len(plan.Topics), "topic", "topics"), time.Since(start).Round(time.Millisecond))
	return nil
}
