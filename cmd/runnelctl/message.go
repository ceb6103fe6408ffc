package main

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func newMessageCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "message",
		Short: "Find messages by id or key",
		Example: `  runnelctl message get 7F00000100002A9F0000000000000C4E
  runnelctl message query --topic orders --key order-42`,
	}
	cmd.AddCommand(newMessageGetCmd(a), newMessageQueryCmd(a))
	return cmd
}

// messageView is a message as runnelctl shows it.
type messageView struct {
	Topic          string            `json:"topic"`
	QueueID        int32             `json:"queueId"`
	QueueOffset    int64             `json:"queueOffset"`
	MsgID          string            `json:"msgId"`
	OffsetMsgID    string            `json:"offsetMsgId"`
	Keys           []string          `json:"keys"`
	Tags           string            `json:"tags,omitempty"`
	BornTimestamp  int64             `json:"bornTimestamp"`
	BornHost       string            `json:"bornHost"`
	StoreTimestamp int64             `json:"storeTimestamp"`
	StoreHost      string            `json:"storeHost"`
	ReconsumeTimes int32             `json:"reconsumeTimes"`
	Properties     map[string]string `json:"properties"`
	// Body is the body as text when it is valid printable UTF-8; otherwise
	// BodyBase64 holds it.
	Body       *string `json:"body,omitempty"`
	BodyBase64 string  `json:"bodyBase64,omitempty"`
}

func viewOf(m *protocol.MessageExt) messageView {
	v := messageView{Topic: m.Topic, QueueID: m.QueueID, QueueOffset: m.QueueOffset, MsgID: m.MsgID,
		OffsetMsgID: m.OffsetMsgID, Keys: m.Keys(), Tags: m.Tags(), BornTimestamp: m.BornTimestamp,
		BornHost: m.BornHost.String(), StoreTimestamp: m.StoreTimestamp, StoreHost: m.StoreHost.String(),
		ReconsumeTimes: m.ReconsumeTimes, Properties: m.Properties}
	if v.Keys == nil {
		v.Keys = []string{}
	}
	if v.Properties == nil {
		v.Properties = map[string]string{}
	}
	if printable(m.Body) {
		s := string(m.Body)
		v.Body = &s
	} else {
		v.BodyBase64 = base64.StdEncoding.EncodeToString(m.Body)
	}
	return v
}

// printMessage writes one message as "field: value" lines.
func (a *app) printMessage(m *protocol.MessageExt) {
	w := a.stdout
	fmt.Fprintf(w, "Topic:           %s\n", m.Topic)
	fmt.Fprintf(w, "Queue:           %d\n", m.QueueID)
	fmt.Fprintf(w, "Queue offset:    %d\n", m.QueueOffset)
	fmt.Fprintf(w, "Msg id:          %s\n", m.MsgID)
	fmt.Fprintf(w, "Offset msg id:   %s\n", m.OffsetMsgID)
	fmt.Fprintf(w, "Keys:            %s\n", dash(strings.Join(m.Keys(), " ")))
	fmt.Fprintf(w, "Tags:            %s\n", dash(m.Tags()))
	fmt.Fprintf(w, "Born:            %s from %s\n", msTime(m.BornTimestamp), m.BornHost)
	fmt.Fprintf(w, "Stored:          %s at %s\n", msTime(m.StoreTimestamp), m.StoreHost)
	fmt.Fprintf(w, "Reconsume times: %d\n", m.ReconsumeTimes)
	fmt.Fprintf(w, "Properties:\n")
	for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
		fmt.Fprintf(w, "  %s=%s\n", k, m.Properties[k])
	}
	fmt.Fprintf(w, "Body (%d bytes):\n%s\n", len(m.Body), bodyText(m.Body))
}

func newMessageGetCmd(a *app) *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a message by id",
		Long: `Show a message by its offsetMsgId (the broker's id: store address and commit log
offset) or, with --topic, by its client message id (the id producers report,
UNIQ_KEY). Both are 32 hex digits; an id whose address is not a known broker is
looked up as a client id.`,
		Example: `  runnelctl message get 7F00000100002A9F0000000000000C4E
  runnelctl message get AC11000100A418B4AAC2615FB1B80000 --topic orders -o json`,
		Args: exactArgs(1, "the message id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			m, err := adm.QueryMessageByID(cmd.Context(), strings.TrimSpace(args[0]), topic)
			if err != nil {
				return err
			}
			if a.output == "json" {
				return writeJSON(a.stdout, viewOf(m))
			}
			a.printMessage(m)
			return nil
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic, needed to find a client message id")
	return cmd
}

func newMessageQueryCmd(a *app) *cobra.Command {
	var (
		q          admin.KeyQuery
		begin, end string
	)
	cmd := &cobra.Command{
		Use:   "query --topic TOPIC --key KEY",
		Short: "Find messages by key",
		Long: `Find the messages of a topic whose keys include KEY, on every broker of the topic,
oldest first. --begin and --end bound the store time (same formats as
group reset-offset --to).`,
		Example: `  runnelctl message query --topic orders --key order-42
  runnelctl message query --topic orders --key order-42 --begin "2024-05-01 00:00:00" --max 10 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case q.Topic == "":
				return fmt.Errorf("message query needs --topic")
			case q.Key == "":
				return fmt.Errorf("message query needs --key")
			}
			now := time.Now()
			var err error
			if begin != "" {
				if q.Begin, err = parseTime(begin, now); err != nil {
					return fmt.Errorf("--begin: %w", err)
				}
			}
			if end != "" {
				if q.End, err = parseTime(end, now); err != nil {
					return fmt.Errorf("--end: %w", err)
				}
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			msgs, err := adm.QueryMessageByKey(cmd.Context(), q)
			if err != nil {
				return err
			}
			if a.output == "json" {
				views := make([]messageView, 0, len(msgs))
				for _, m := range msgs {
					views = append(views, viewOf(m))
				}
				return writeJSON(a.stdout, views)
			}
			if len(msgs) == 0 {
				return fmt.Errorf("no message with key %q on topic %q", q.Key, q.Topic)
			}
			t := newTable(a.stdout, "MSG ID", "OFFSET MSG ID", "QUEUE", "QUEUE OFFSET", "TAGS", "STORED", "BODY")
			for _, m := range msgs {
				t.row(m.MsgID, m.OffsetMsgID, m.QueueID, m.QueueOffset, dash(m.Tags()), msTime(m.StoreTimestamp), preview(bodyText(m.Body), 40))
			}
			return t.flush()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&q.Topic, "topic", "t", "", "topic (required)")
	f.StringVarP(&q.Key, "key", "k", "", "message key (required)")
	f.StringVar(&begin, "begin", "", "earliest store time")
	f.StringVar(&end, "end", "", "latest store time")
	f.IntVar(&q.Max, "max", admin.DefaultMaxMessages, "most messages to show")
	return cmd
}
