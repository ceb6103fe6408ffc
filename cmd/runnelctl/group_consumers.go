package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// consumersOutput is `group consumers -o json`.
type consumersOutput struct {
	*admin.ConsumerConnection
	// Running holds each client's running info, in client order, with
	// --running.
	Running []clientRunning `json:"running,omitempty"`
}

// clientRunning is one client's running info or why it is missing.
type clientRunning struct {
	ClientID string             `json:"clientId"`
	Info     *admin.RunningInfo `json:"info,omitempty"`
	Error    string             `json:"error,omitempty"`
}

func newGroupConsumersCmd(a *app) *cobra.Command {
	var (
		group, client  string
		running, stack bool
	)
	cmd := &cobra.Command{
		Use:   "consumers --group GROUP [--running [--stack]]",
		Short: "List a group's online clients, and what each is doing",
		Long: `List the clients of a consumer group that the brokers have online (client id,
address, language, version, the brokers they are connected to) and the group's
subscriptions, as mqadmin consumerConnection does.

With --running, each client is also asked, through a broker, for its running info
(mqadmin consumerStatus): its settings, and per queue the offset it will commit,
the messages it has pulled and not yet consumed, its lock (orderly consumers) and
when it last pulled and consumed; per topic its pull and consume rates when the
client keeps them. --stack adds the client's thread or goroutine dump. A client
that cannot answer is reported and the others are still shown. --client asks
only that client (mqadmin consumerStatus -i).`,
		Example: `  runnelctl group consumers --group billing
  runnelctl group consumers --group billing --running
  runnelctl group consumers --group billing --running -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("group consumers needs --group")
			}
			if client != "" {
				running = true
			}
			if stack && !running {
				return fmt.Errorf("--stack needs --running")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			cc, err := adm.ConsumerConnections(cmd.Context(), group)
			if err != nil {
				return err
			}
			out := consumersOutput{ConsumerConnection: cc}
			if client != "" && !slices.ContainsFunc(cc.Clients, func(c admin.ConsumerClient) bool { return c.ClientID == client }) {
				return fmt.Errorf("client %s is not online in group %s (runnelctl group consumers --group %s lists those that are)", client, group, group)
			}
			if running {
				for _, c := range cc.Clients {
					if client != "" && c.ClientID != client {
						continue
					}
					r := clientRunning{ClientID: c.ClientID}
					if r.Info, err = adm.ConsumerRunningInfo(cmd.Context(), group, c.ClientID, stack); err != nil {
						r.Error = oneLine(err)
					}
					out.Running = append(out.Running, r)
				}
			}
			if a.output == "json" {
				if out.Subscriptions == nil {
					out.Subscriptions = []admin.Subscription{}
				}
				return writeJSON(a.stdout, out)
			}
			return printConsumers(a.stdout, out)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "consumer group (required)")
	f.BoolVar(&running, "running", false, "also ask each client for its running info")
	f.BoolVar(&stack, "stack", false, "with --running: include each client's stack dump")
	f.StringVar(&client, "client", "", "only this client's running info (implies --running)")
	return cmd
}

func printConsumers(w io.Writer, out consumersOutput) error {
	cc := out.ConsumerConnection
	fmt.Fprintf(w, "group %s: %s, %s, %s\n\n", cc.Group, dash(cc.MessageModel), dash(cc.ConsumeType), dash(cc.ConsumeFromWhere))
	t := newTable(w, "CLIENT ID", "ADDRESS", "LANGUAGE", "VERSION", "PROTOCOL", "BROKERS")
	for _, c := range cc.Clients {
		t.row(c.ClientID, dash(c.Addr), dash(c.Language), versionName(c.Version), dash(c.Protocol), strings.Join(c.Brokers, ","))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = newTable(w, "TOPIC", "EXPRESSION", "TYPE")
	for _, s := range cc.Subscriptions {
		t.row(s.Topic, s.Expression, dash(s.ExpressionType))
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, r := range out.Running {
		fmt.Fprintf(w, "\n== %s\n", r.ClientID)
		if r.Info == nil {
			fmt.Fprintf(w, "error: %s\n", r.Error)
			continue
		}
		if err := printRunningInfo(w, r.Info); err != nil {
			return err
		}
	}
	return nil
}

func printRunningInfo(w io.Writer, ri *admin.RunningInfo) error {
	fmt.Fprintf(w, "asked through %s\n", ri.Broker)
	t := newTable(w, "PROPERTY", "VALUE")
	for _, k := range slices.Sorted(maps.Keys(ri.Properties)) {
		t.row(k, dash(ri.Properties[k]))
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = newTable(w, "TOPIC", "BROKER", "QUEUE", "COMMIT OFFSET", "CACHED", "CACHED OFFSETS", "LOCKED", "DROPPED", "LAST PULL", "LAST CONSUME")
	for _, q := range ri.Queues {
		cached := "-"
		if q.CachedMsgCount > 0 {
			cached = strconv.FormatInt(q.CachedMsgMinOffset, 10) + ".." + strconv.FormatInt(q.CachedMsgMaxOffset, 10)
		}
		t.row(q.Topic, q.Broker, q.QueueID, q.CommitOffset, q.CachedMsgCount, cached, q.Locked, q.Dropped,
			msTime(q.LastPullTimestamp), msTime(q.LastConsumeTime))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(ri.Status) > 0 {
		fmt.Fprintln(w)
		t = newTable(w, "TOPIC", "PULL TPS", "PULL RT MS", "CONSUME OK TPS", "CONSUME FAILED TPS", "CONSUME RT MS", "FAILED LAST HOUR")
		for _, topic := range slices.Sorted(maps.Keys(ri.Status)) {
			s := ri.Status[topic]
			t.row(topic, rate(s.PullTPS), rate(s.PullRT), rate(s.ConsumeOKTPS), rate(s.ConsumeFailedTPS), rate(s.ConsumeRT), s.ConsumeFailedMsgs)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if ri.Stack != "" {
		fmt.Fprintf(w, "\nstack:\n%s\n", strings.TrimRight(ri.Stack, "\n"))
	}
	return nil
}

// versionName shows a client's protocol version as RocketMQ names it
// (V4_9_4), as mqadmin consumerConnection does.
func versionName(v int) string { return protocol.VersionName(v) }

func rate(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func newGroupProducersCmd(a *app) *cobra.Command {
	var group string
	cmd := &cobra.Command{
		Use:   "producers --group PRODUCER_GROUP",
		Short: "List a producer group's connected clients",
		Long: `List the clients of a producer group connected to any broker (mqadmin
producerConnection): broker, client id, address, language and version.`,
		Example: `  runnelctl group producers --group runnelctl
  runnelctl group producers --group order-service -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("group producers needs --group")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			clients, err := adm.ProducerConnections(cmd.Context(), group)
			return printResult(a, clients, err, func(clients []admin.ProducerClient) error {
				t := newTable(a.stdout, "BROKER", "CLIENT ID", "ADDRESS", "LANGUAGE", "VERSION", "PROTOCOL")
				for _, c := range clients {
					t.row(c.Broker, c.ClientID, dash(c.Addr), dash(c.Language), versionName(c.Version), dash(c.Protocol))
				}
				return t.flush()
			})
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "producer group (required)")
	return cmd
}
