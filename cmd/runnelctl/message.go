package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/msgtext"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func newMessageCmd(a *app) *cobra.Command {
	return nounCmd("message", "Find messages by id or key, print a queue, replay one on a consumer, recall a timer message", "", `  runnelctl message get 7F00000100002A9F0000000000000C4E
  runnelctl message query --topic orders --key order-42
  runnelctl message print --topic orders --count 5
  runnelctl message recall --topic reminders --handle HANDLE`,
		newMessageGetCmd(a), newMessageQueryCmd(a), newMessagePrintCmd(a), newMessageConsumeDirectlyCmd(a), newMessageTraceCmd(a),
		newMessageRecallCmd(a))
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
	BodyBase64 []byte  `json:"bodyBase64,omitempty"` // encoding/json writes []byte as base64
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
	v.Body, v.BodyBase64 = msgtext.JSONBody(m.Body)
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
offset) or by its client message id (the MSG ID send prints, UNIQ_KEY). Both
are 32 hex digits. An id that is not the offsetMsgId of a known broker is taken
as a client message id and looked up on --topic, or without --topic on every
non-system topic of the cluster (up to 200 of them).`,
		Example: `  runnelctl message get 7F00000100002A9F0000000000000C4E
  runnelctl message get AC11000100A418B4AAC2615FB1B80000 --topic orders -o json`,
		Args: exactArgs(1, "the message id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			id := strings.TrimSpace(args[0])
			var m *protocol.MessageExt
			if topic == "" && !a.isOffsetMsgID(cmd.Context(), id) {
				m, err = a.findClientID(cmd.Context(), id)
			} else {
				m, err = adm.QueryMessageByID(cmd.Context(), id, topic)
			}
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

// isOffsetMsgID reports whether id decodes to the address of a broker the
// name server lists.
func (a *app) isOffsetMsgID(ctx context.Context, id string) bool {
	host, _, err := message.ParseOffsetMsgID(id)
	if err != nil {
		return false
	}
	adm, err := a.admin()
	if err != nil {
		return false
	}
	brokers, err := adm.Brokers(ctx)
	if err != nil {
		return true // let the lookup itself report the name server's trouble
	}
	return slices.ContainsFunc(brokers, func(b admin.Broker) bool { return b.Addr == host.String() })
}

// maxTopicsSearched bounds the topics a client message id is looked for on
// without --topic.
const maxTopicsSearched = 200

// findClientID looks a client message id up on every non-system topic.
func (a *app) findClientID(ctx context.Context, id string) (*protocol.MessageExt, error) {
	if len(id) != 32 {
		return nil, fmt.Errorf("message id %q: want 32 hex digits (an offsetMsgId or the MSG ID send prints)", id)
	}
	adm, err := a.admin()
	if err != nil {
		return nil, err
	}
	topics, err := adm.TopicList(ctx)
	if err != nil {
		return nil, err
	}
	topics = slices.DeleteFunc(topics, admin.IsSystemTopic)
	if len(topics) > maxTopicsSearched {
		return nil, fmt.Errorf("%s is not the offsetMsgId of a known broker and the cluster has %d topics: add --topic to look it up as a client message id", id, len(topics))
	}
	for _, t := range topics {
		if m, err := adm.QueryMessageByID(ctx, id, t); err == nil {
			return m, nil
		}
		// Not there, or the topic is being deleted: the others may have it.
	}
	return nil, fmt.Errorf("no message with id %s on any of the %d non-system topics (for a retry or dead-letter topic, add --topic)", id, len(topics))
}

func newMessageQueryCmd(a *app) *cobra.Command {
	var (
		q     admin.KeyQuery
		times timeRange
	)
	cmd := &cobra.Command{
		Use:   "query --topic TOPIC --key KEY",
		Short: "Find messages by key",
		Long: `Find the messages of a topic whose keys include KEY, on every broker of the topic,
oldest first. --begin and --end bound the store time (same formats as
group reset-offset --to). With --unique KEY is a client message id (the MSG ID
send prints) and every stored copy of that message is listed (a producer's
retries can store one twice), as mqadmin queryMsgByUniqueKey -a does.`,
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
			var err error
			if q.Begin, q.End, err = times.parse(time.Now()); err != nil {
				return err
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
				what := "key"
				if q.Unique {
					what = "id"
				}
				return fmt.Errorf("no message with %s %q on topic %q", what, q.Key, q.Topic)
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
	times.register(f, "earliest store time", "latest store time")
	f.IntVar(&q.Max, "max", admin.DefaultMaxMessages, "most messages to show")
	f.BoolVar(&q.Unique, "unique", false, "KEY is a client message id: list every stored copy")
	return cmd
}
