package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/queue"
)

// printSpec is what message print reads.
type printSpec struct {
	topic, broker, tag string
	queueID            int
	oneQueue           bool
	from               int64 // first offset, when fromSet
	fromSet            bool
	begin, end         time.Time // store time bounds; zero: none
	count              int       // most per queue; 0: to the end
	max                int       // most in all; 0: no limit
	noBody             bool
}

func newMessagePrintCmd(a *app) *cobra.Command {
	var (
		s     printSpec
		times timeRange
		all   bool
	)
	cmd := &cobra.Command{
		Use:   "print --topic TOPIC [--broker B --queue Q] [--offset N | --begin TIME] [--count N | --all]",
		Short: "Print a queue's messages from an offset or a time",
		Long: `Pull messages from a topic's queues and print them; no consumer group's offsets
move (mqadmin printMsg, queryMsgByOffset, consumeMessage). Each queue is read
from --offset, or from the first message stored at or after --begin, or from its
oldest; up to --count messages per queue, or with --all to its end, stopping at
the first message stored after --end. --max bounds the messages in all.
--queue and --broker pick queues; --no-body leaves the bodies out.`,
		Example: `  runnelctl message print --topic orders --count 5
  runnelctl message print --topic orders --broker broker-a --queue 0 --offset 42 --count 1
  runnelctl message print --topic orders --all --begin 15m --no-body`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			s.oneQueue, s.fromSet = fl.Changed("queue"), fl.Changed("offset")
			switch {
			case s.topic == "":
				return fmt.Errorf("message print needs --topic")
			case all && fl.Changed("count"):
				return fmt.Errorf("--count and --all exclude each other")
			case s.fromSet && times.begin != "":
				return fmt.Errorf("--offset and --begin exclude each other")
			case !all && (s.count < 1 || s.count > 1024):
				return fmt.Errorf("--count %d: want 1..1024", s.count)
			case s.max < 0:
				return fmt.Errorf("--max %d: want 0 (no limit) or more", s.max)
			}
			if all {
				s.count = 0
			}
			var err error
			if s.begin, s.end, err = times.parse(time.Now()); err != nil {
				return err
			}
			return a.printQueues(cmd.Context(), s)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&s.topic, "topic", "t", "", "topic (required)")
	f.StringVarP(&s.broker, "broker", "b", "", "only this broker group's queues")
	f.IntVarP(&s.queueID, "queue", "i", 0, "only this queue id")
	f.Int64Var(&s.from, "offset", 0, "first queue offset (default: each queue's oldest)")
	times.register(f, "start at the first message stored at or after this time", "stop at the first message stored after this time")
	f.IntVar(&s.count, "count", 16, "most messages per queue")
	f.BoolVar(&all, "all", false, "every message to the end of each queue (or --end)")
	f.IntVar(&s.max, "max", 0, "most messages in all (0: no limit)")
	f.StringVar(&s.tag, "tag", "*", "tag expression")
	f.BoolVar(&s.noBody, "no-body", false, "leave the bodies out")
	return cmd
}

func (a *app) printQueues(ctx context.Context, s printSpec) error {
	cfg := client.DefaultPullConsumerConfig()
	cfg.Client = a.clientConfig("print")
	pc, err := client.NewPullConsumer(cfg)
	if err != nil {
		return err
	}
	if err := pc.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = pc.Shutdown(context.Background()) }()
	mqs, err := pc.MessageQueues(ctx, s.topic)
	if err != nil {
		return fmt.Errorf("topic %s: %w", s.topic, err)
	}
	mqs = slices.DeleteFunc(mqs, func(mq queue.MessageQueue) bool {
		return (s.broker != "" && mq.BrokerName != s.broker) || (s.oneQueue && int(mq.QueueID) != s.queueID)
	})
	if len(mqs) == 0 {
		return fmt.Errorf("topic %s has no readable queue matching --broker/--queue", s.topic)
	}
	views := []messageView{}
	printed := 0
	for _, mq := range mqs {
		off, err := startOffset(ctx, pc, mq, s)
		if err != nil {
			return err
		}
		for n := 0; (s.count == 0 || n < s.count) && (s.max == 0 || printed < s.max); {
			want := 32
			if s.count > 0 {
				want = min(want, s.count-n)
			}
			res, err := pc.Pull(ctx, mq, off, want, client.PullOptions{Expression: s.tag})
			if err != nil {
				return fmt.Errorf("pull %s at %d: %w", mq, off, err)
			}
			past := false
			for _, m := range res.Messages {
				if past = !s.end.IsZero() && m.StoreTimestamp > s.end.UnixMilli(); past || (s.max > 0 && printed >= s.max) || (s.count > 0 && n >= s.count) {
					break
				}
				if s.noBody {
					m.Body = nil
				}
				if a.output == "json" {
					views = append(views, viewOf(&m.MessageExt))
				} else {
					a.printMessage(&m.MessageExt)
					fmt.Fprintln(a.stdout)
				}
				n++
				printed++
			}
			if past || res.Status == client.PullNoNewMessage || res.Status == client.PullOffsetIllegal || res.NextOffset <= off {
				break
			}
			off = res.NextOffset
		}
	}
	if a.output == "json" {
		return writeJSON(a.stdout, views)
	}
	return nil
}

// startOffset is where message print reads mq first.
func startOffset(ctx context.Context, pc *client.PullConsumer, mq queue.MessageQueue, s printSpec) (int64, error) {
	switch {
	case s.fromSet:
		return s.from, nil
	case !s.begin.IsZero():
		return pc.OffsetForTimestamp(ctx, mq, s.begin)
	}
	return pc.MinOffset(ctx, mq)
}

func newMessageConsumeDirectlyCmd(a *app) *cobra.Command {
	var group, clientID, topic string
	cmd := &cobra.Command{
		Use:   "consume-directly ID --group GROUP --client CLIENT_ID [--topic TOPIC]",
		Short: "Have one online consumer run its listener on one message",
		Long: `Ask one online client of a group to run its listener on a stored message, named
by its offsetMsgId, or by its client message id with --topic, outside its
normal flow: no offsets move (mqadmin queryMsgById -g -d; rocketmq-dashboard's
"resend to consumer"). Client ids come from runnelctl group consumers.`,
		Example: `  runnelctl message consume-directly 7F00000100002A9F0000000000000C4E --group billing --client 10.0.0.7@1234`,
		Args:    exactArgs(1, "the offsetMsgId"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case group == "":
				return fmt.Errorf("consume-directly needs --group")
			case clientID == "":
				return fmt.Errorf("consume-directly needs --client (see runnelctl group consumers --group %s)", group)
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			id := args[0]
			if topic != "" {
				m, err := adm.QueryMessageByID(cmd.Context(), id, topic)
				if err != nil {
					return err
				}
				id = m.OffsetMsgID
			}
			res, err := adm.ConsumeMessageDirectly(cmd.Context(), group, clientID, id)
			return printResult(a, res, err, func(res *admin.DirectResult) error {
				t := newTable(a.stdout, "RESULT", "ORDER", "AUTO COMMIT", "SPENT MS", "REMARK")
				t.row(res.Result, res.Order, res.AutoCommit, res.SpentTime, dash(res.Remark))
				return t.flush()
			})
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "consumer group (required)")
	cmd.Flags().StringVar(&clientID, "client", "", "client id (required)")
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "the topic of a client message id")
	return cmd
}
