package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

func newGroupCmd(a *app) *cobra.Command {
	return nounCmd("group", "Consumer groups: list, progress, online consumers and producers, offset reset and clone, delete", "", `  runnelctl group list
  runnelctl group progress --group billing
  runnelctl group consumers --group billing --running
  runnelctl group reset-offset --group billing --topic orders --to earliest
  runnelctl group update --group billing --retry-max-times 3
  runnelctl group config billing
  runnelctl group delete --group billing-old
  runnelctl group clone-offset --src billing --dest billing-v2`,
		newGroupListCmd(a), newGroupProgressCmd(a), newGroupConsumersCmd(a), newGroupResetCmd(a), newGroupProducersCmd(a),
		newGroupDeleteCmd(a), newGroupCloneCmd(a), newGroupUpdateCmd(a), newGroupConfigCmd(a))
}

func newGroupListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List consumer groups",
		Long: `List the consumer groups the brokers know (their subscription configs or committed
offsets) and those with a %RETRY% topic, with how many consumers are online.`,
		Example: `  runnelctl group list
  runnelctl group list -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			groups, err := adm.ConsumerGroups(cmd.Context())
			if err != nil {
				return err
			}
			return printList(a, groups, []string{"GROUP", "CONSUMERS", "BROKERS"}, func(g admin.Group) []any {
				return []any{g.Name, consumerCount(g.Consumers), dash(strings.Join(g.Brokers, ","))}
			})
		},
	}
}

func newGroupProgressCmd(a *app) *cobra.Command {
	var (
		arg     groupArg
		topic   string
		clients bool
	)
	cmd := &cobra.Command{
		Use:   "progress [GROUP] [--topic TOPIC]",
		Short: "Show a group's offsets and lag per queue, or every group's lag",
		Long: `Show, per queue, the broker offset (the next offset the queue will store), the
group's committed consumer offset, the lag (their difference) and the store time of
the last consumed message. Without --topic, every topic the group has offsets for,
its %RETRY% topic included. --clients adds the online client holding each queue
(asked of each client, as mqadmin consumerProgress -s true does).

The group is the argument or --group. Without one, every group the brokers know
is listed with its online consumers and total lag (mqadmin consumerProgress
without -g).`,
		Example: `  runnelctl group progress billing
  runnelctl group progress --group billing --topic orders -o json
  runnelctl group progress`,
		RunE: func(cmd *cobra.Command, args []string) error {
			group, err := arg.get(cmd, args, false)
			if err != nil {
				return err
			}
			if group == "" {
				if topic != "" || clients {
					return fmt.Errorf("--topic and --clients need a group")
				}
				return a.everyGroupProgress(cmd.Context())
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			rows, err := adm.ConsumerProgress(cmd.Context(), group, topic)
			if err != nil {
				return err
			}
			var holders map[queueRef]string
			if clients {
				holders = a.queueHolders(cmd.Context(), group)
			}
			if a.output == "json" {
				out := progressOutput{Group: group, Topic: topic, TotalLag: admin.TotalLag(rows), Queues: []progressQueue{}}
				for _, r := range rows {
					out.Queues = append(out.Queues, progressQueue{QueueProgress: r, Client: holders[queueRef{r.Topic, r.Broker, r.QueueID}]})
				}
				return writeJSON(a.stdout, out)
			}
			header := []string{"TOPIC", "BROKER", "QUEUE", "BROKER OFFSET", "CONSUMER OFFSET", "LAG", "LAST CONSUMED"}
			if clients {
				header = append(header, "CLIENT")
			}
			t := newTable(a.stdout, header...)
			for _, r := range rows {
				cells := []any{r.Topic, r.Broker, r.QueueID, r.BrokerOffset, r.ConsumerOffset, r.Lag, msTime(r.LastTimestamp)}
				if clients {
					cells = append(cells, dash(holders[queueRef{r.Topic, r.Broker, r.QueueID}]))
				}
				t.row(cells...)
			}
			t.row("TOTAL", "", "", "", "", admin.TotalLag(rows), "")
			return t.flush()
		},
	}
	arg.register(a, cmd)
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "only this topic")
	cmd.Flags().BoolVar(&clients, "clients", false, "show the online client holding each queue")
	return cmd
}

// progressOutput is `group progress -o json`.
type progressOutput struct {
	Group    string          `json:"group"`
	Topic    string          `json:"topic,omitempty"`
	TotalLag int64           `json:"totalLag"`
	Queues   []progressQueue `json:"queues"`
}

type progressQueue struct {
	admin.QueueProgress
	Client string `json:"client,omitempty"`
}

// groupProgress is one group in `group progress` without a group.
type groupProgress struct {
	Group     string `json:"group"`
	Consumers int    `json:"consumers"` // -1: unknown
	Lag       int64  `json:"lag"`
}

// everyGroupProgress lists every group with its online consumers and lag.
func (a *app) everyGroupProgress(ctx context.Context) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	groups, err := adm.ConsumerGroups(ctx)
	if err != nil {
		return err
	}
	out := []groupProgress{}
	for _, g := range groups {
		rows, err := adm.ConsumerProgress(ctx, g.Name, "")
		if err != nil {
			return err
		}
		out = append(out, groupProgress{Group: g.Name, Consumers: g.Consumers, Lag: admin.TotalLag(rows)})
	}
	if a.output == "json" {
		return writeJSON(a.stdout, out)
	}
	t := newTable(a.stdout, "GROUP", "CONSUMERS", "LAG")
	for _, g := range out {
		t.row(g.Group, consumerCount(g.Consumers), g.Lag)
	}
	return t.flush()
}

// queueHolders asks each online client of group which queues it holds;
// a client that does not answer is left out.
func (a *app) queueHolders(ctx context.Context, group string) map[queueRef]string {
	out := map[queueRef]string{}
	adm, err := a.admin()
	if err != nil {
		return out
	}
	cc, err := adm.ConsumerConnections(ctx, group)
	if err != nil {
		return out
	}
	for _, c := range cc.Clients {
		info, err := adm.ConsumerRunningInfo(ctx, group, c.ClientID, false)
		if err != nil {
			continue
		}
		for _, q := range info.Queues {
			if !q.Dropped {
				out[queueRef{q.Topic, q.Broker, q.QueueID}] = c.ClientID
			}
		}
	}
	return out
}

// queueRef names a queue of a group's progress.
type queueRef struct {
	topic, broker string
	id            int32
}

// consumerCount is a group's online consumers, "?" when unknown.
func consumerCount(n int) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

func newGroupResetCmd(a *app) *cobra.Command {
	var group, topic, to string
	var create bool
	cmd := &cobra.Command{
		Use:   "reset-offset --group GROUP --topic TOPIC --to TIME|earliest|latest",
		Short: "Move a group's offsets on a topic to a time",
		Long: `Move a consumer group's offsets on every queue of a topic: to the first message
stored at or after a time, to the oldest message (earliest) or past the newest
(latest).

The brokers are first asked to do it themselves (INVOKE_BROKER_TO_RESET_OFFSET),
which also tells the group's online consumers. Where a broker answers that the
group is offline, or does not support that request, the offsets are committed
directly (method "direct"); consumers still online would overwrite those at their
next commit, so stop them first.

A group no broker knows (no subscription, offsets or %RETRY% topic) is refused,
since a mistyped name would otherwise be created with offsets; --create gives
a new group its offsets on purpose.

TIME is "now", a duration ago (15m, 2h), milliseconds since the epoch, RFC 3339
(2024-05-01T10:00:00Z), "2024-05-01 10:00:00" (local time) or mqadmin's
"2024-05-01#10:00:00:000".`,
		Example: `  runnelctl group reset-offset --group billing --topic orders --to earliest
  runnelctl group reset-offset --group billing --topic orders --to latest
  runnelctl group reset-offset --group billing --topic orders --to 15m
  runnelctl group reset-offset --group billing --topic orders --to 2024-05-01T10:00:00Z
  runnelctl group reset-offset --group billing --topic orders --to 1714557600000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case group == "":
				return fmt.Errorf("reset-offset needs --group")
			case topic == "":
				return fmt.Errorf("reset-offset needs --topic")
			}
			target, err := parseResetTarget(to, time.Now())
			if err != nil {
				return err
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			if !create {
				groups, err := adm.ConsumerGroups(cmd.Context())
				if err != nil {
					return err
				}
				if !slices.ContainsFunc(groups, func(g admin.Group) bool { return g.Name == group }) {
					return fmt.Errorf("group %s is not known to any broker (runnelctl group list shows those that are); check the name, or add --create to give a new group offsets", group)
				}
			}
			rows, err := adm.ResetOffset(cmd.Context(), group, topic, target)
			if err != nil {
				return err
			}
			direct := 0
			for _, r := range rows {
				if r.Method == admin.ResetDirect {
					direct++
				}
			}
			if direct > 0 {
				fmt.Fprintf(a.stderr, "note: %s committed directly; consumers of %s still online keep their own position and overwrite them at their next commit\n", plural(direct, "queue offset was", "queue offsets were"), group)
			}
			return printList(a, rows, []string{"TOPIC", "BROKER", "QUEUE", "NEW OFFSET", "METHOD"}, func(r admin.QueueReset) []any {
				return []any{r.Topic, r.Broker, r.QueueID, r.Offset, r.Method}
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "consumer group (required)")
	f.StringVarP(&topic, "topic", "t", "", "topic (required)")
	f.StringVar(&to, "to", "", "earliest, latest, a duration ago (15m) or a time (required)")
	f.BoolVar(&create, "create", false, "reset a group no broker knows yet (creating its offsets)")
	return cmd
}
