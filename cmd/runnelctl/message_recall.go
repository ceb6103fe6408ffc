package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// recallRow is a recalled message in the output.
type recallRow struct {
	MsgID  string `json:"msgId"`
	Topic  string `json:"topic"`
	Broker string `json:"brokerName"`
	Due    int64  `json:"dueTimestamp"` // when it would have been delivered, ms
}

func newMessageRecallCmd(a *app) *cobra.Command {
	var topic, handle, group string
	cmd := &cobra.Command{
		Use:   "recall --topic TOPIC --handle HANDLE",
		Short: "Withdraw a timer message before it is delivered",
		Long: `Withdraw a timer message (send --delay 90s, --deliver-at) before it falls due,
so no consumer receives it (RocketMQ 5.3's recall: DefaultMQProducer.recallMessage).
HANDLE is the recall handle its send printed (RECALL HANDLE, recallHandle with -o
json); it names the broker that holds the message, and the recall goes there.
Prints the message's id, its broker and when it was due.

A handle that does not parse is refused here; the broker refuses one of another
topic or broker, and one whose message is already due or delivered. Like
RocketMQ's, the broker accepts a well-formed handle it never issued, due in the
future, and then withdraws nothing. Delay levels (--delay 3) give no handle.`,
		Example: `  runnelctl send --topic reminders --delay 1h "call back"
  runnelctl message recall --topic reminders --handle djEgcmVtaW5kZXJzIGJyb2tlci1hIDE3...`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case topic == "":
				return fmt.Errorf("recall needs --topic")
			case handle == "":
				return fmt.Errorf("recall needs --handle (the recall handle send printed)")
			}
			h, err := message.DecodeRecallHandle(handle)
			if err != nil {
				return fmt.Errorf("--handle: %w", err)
			}
			id, err := a.recall(cmd.Context(), group, topic, handle)
			if err != nil {
				return recallError(topic, err)
			}
			return printResult(a, recallRow{MsgID: id, Topic: topic, Broker: h.Broker, Due: h.Due}, nil, func(r recallRow) error {
				t := newTable(a.stdout, "MSG ID", "TOPIC", "BROKER", "DUE")
				t.row(r.MsgID, r.Topic, r.Broker, msTime(r.Due))
				return t.flush()
			})
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "the message's topic (required)")
	cmd.Flags().StringVar(&handle, "handle", "", "the recall handle its send printed (required)")
	cmd.Flags().StringVarP(&group, "group", "g", "runnelctl", "producer group")
	return cmd
}

// recall recalls handle's message with a producer of group.
func (a *app) recall(ctx context.Context, group, topic, handle string) (string, error) {
	p, err := a.startProducer(ctx, group, "recall", nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	return p.Recall(ctx, topic, handle)
}

// recallError names a broker's refusal by its code's name, which says
// more to an operator than its number.
func recallError(topic string, err error) error {
	var be *client.BrokerError
	if errors.As(err, &be) {
		return fmt.Errorf("recall on %s: broker %s (%s) refused: %s: %s", topic, be.Broker, be.Addr, protocol.ResponseCodeOf(be.Code).Name, be.Remark)
	}
	return fmt.Errorf("recall on %s: %w", topic, err)
}
