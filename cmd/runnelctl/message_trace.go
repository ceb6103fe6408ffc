package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/trace"
)

// newMessageTraceCmd reads the trace records clients write (client/trace
// owns the format) from the trace topic, by the traced message's id.
func newMessageTraceCmd(a *app) *cobra.Command {
	var (
		id, topic string
		maxMsgs   int
		times     timeRange
	)
	cmd := &cobra.Command{
		Use:   "trace --id ID",
		Short: "Show a message's produce and consume records from the trace topic",
		Long: `Show the trace records clients with tracing on (the official clients' WithTrace)
wrote for a message: its send (Pub) and, per consume, SubBefore and SubAfter,
with their time, group, client host, cost and status. ID is the client message
id (the MSG ID a send prints, UNIQ_KEY); trace messages are found by that key
on --topic (default ` + trace.Topic + `).`,
		Example: `  runnelctl message trace --id AC11000100A418B4AAC2615FB1B80000
  runnelctl message trace --id AC11000100A418B4AAC2615FB1B80000 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id = strings.TrimSpace(id)
			if id == "" {
				return fmt.Errorf("message trace needs --id")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			q := admin.KeyQuery{Topic: topic, Key: id, Max: maxMsgs}
			if q.Begin, q.End, err = times.parse(time.Now()); err != nil {
				return err
			}
			recs, err := adm.MessageTrace(cmd.Context(), q)
			if err != nil {
				return err
			}
			if a.output == "json" {
				return writeJSONList(a.stdout, recs)
			}
			if len(recs) == 0 {
				return fmt.Errorf("no trace of message %s on topic %s (is tracing on in its producer and consumers?)", id, topic)
			}
			t := newTable(a.stdout, "TYPE", "TIME", "GROUP", "CLIENT HOST", "COST", "STATUS", "DETAIL")
			for _, r := range recs {
				t.row(r.Type, msTime(r.Time), dash(r.Group), dash(r.ClientHost), costOf(r), statusOf(r), detailOf(r))
			}
			return t.flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&id, "id", "", "client message id (required)")
	f.StringVarP(&topic, "topic", "t", trace.Topic, "trace topic")
	f.IntVar(&maxMsgs, "max", admin.DefaultMaxMessages, "most trace messages to read")
	times.register(f, "earliest store time of the trace messages", "latest store time of the trace messages")
	return cmd
}

func costOf(r trace.Record) string {
	if r.Type == trace.SubBefore {
		return "-"
	}
	return strconv.FormatInt(r.CostMs, 10) + "ms"
}

func statusOf(r trace.Record) string {
	switch {
	case r.Success == nil:
		return "-"
	case *r.Success:
		return "success"
	default:
		return "failed"
	}
}

func detailOf(r trace.Record) string {
	switch r.Type {
	case trace.Pub:
		return fmt.Sprintf("topic %s, stored at %s as %s", r.Topic, dash(r.StoreHost), dash(r.OffsetMsgID))
	case trace.SubBefore:
		return fmt.Sprintf("retry %d", r.RetryTimes)
	}
	return ""
}
