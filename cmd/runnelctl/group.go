package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

func newGroupCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Consumer groups: list, progress, online consumers and producers, offset reset and clone, delete",
		Example: `  runnelctl group list
  runnelctl group progress --group billing
  runnelctl group consumers --group billing --running
  runnelctl group reset-offset --group billing --topic orders --to earliest
  runnelctl group update --group billing --retry-max-times 3
  runnelctl group delete --group runnel-consumer-1a2b3c
  runnelctl group clone-offset --src billing --dest billing-v2`,
	}
	cmd.AddCommand(newGroupListCmd(a), newGroupProgressCmd(a), newGroupConsumersCmd(a), newGroupResetCmd(a), newGroupProducersCmd(a),
		newGroupDeleteCmd(a), newGroupCloneCmd(a), newGroupUpdateCmd(a))
	return cmd
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
			if a.output == "json" {
				if groups == nil {
					groups = []admin.Group{}
				}
				return writeJSON(a.stdout, groups)
			}
			t := newTable(a.stdout, "GROUP", "CONSUMERS", "BROKERS")
			for _, g := range groups {
				online := fmt.Sprint(g.Consumers)
				if g.Consumers < 0 {
					online = "?"
				}
				t.row(g.Name, online, dash(strings.Join(g.Brokers, ",")))
			}
			return t.flush()
		},
	}
}

// progressOutput is `group progress -o json`.
type progressOutput struct {
	Group    string                `json:"group"`
	Topic    string                `json:"topic,omitempty"`
	TotalLag int64                 `json:"totalLag"`
	Queues   []admin.QueueProgress `json:"queues"`
}

func newGroupProgressCmd(a *app) *cobra.Command {
	var group, topic string
	cmd := &cobra.Command{
		Use:   "progress --group GROUP [--topic TOPIC]",
		Short: "Show a group's offsets and lag per queue",
		Long: `Show, per queue, the broker offset (the next offset the queue will store), the
group's committed consumer offset, the lag (their difference) and the store time of
the last consumed message. Without --topic, every topic the group has offsets for,
its %RETRY% topic included.`,
		Example: `  runnelctl group progress --group billing
  runnelctl group progress --group billing --topic orders -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("group progress needs --group")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			rows, err := adm.ConsumerProgress(cmd.Context(), group, topic)
			if err != nil {
				return err
			}
			if a.output == "json" {
				return writeJSON(a.stdout, progressOutput{Group: group, Topic: topic, TotalLag: admin.TotalLag(rows), Queues: rows})
			}
			t := newTable(a.stdout, "TOPIC", "BROKER", "QUEUE", "BROKER OFFSET", "CONSUMER OFFSET", "LAG", "LAST CONSUMED")
			for _, r := range rows {
				t.row(r.Topic, r.Broker, r.QueueID, r.BrokerOffset, r.ConsumerOffset, r.Lag, msTime(r.LastTimestamp))
			}
			t.row("TOTAL", "", "", "", "", admin.TotalLag(rows), "")
			return t.flush()
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "consumer group (required)")
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "only this topic")
	return cmd
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
			if a.output == "json" {
				if rows == nil {
					rows = []admin.QueueReset{}
				}
				return writeJSON(a.stdout, rows)
			}
			t := newTable(a.stdout, "TOPIC", "BROKER", "QUEUE", "NEW OFFSET", "METHOD")
			for _, r := range rows {
				t.row(r.Topic, r.Broker, r.QueueID, r.Offset, r.Method)
			}
			return t.flush()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "consumer group (required)")
	f.StringVarP(&topic, "topic", "t", "", "topic (required)")
	f.StringVar(&to, "to", "", "earliest, latest, a duration ago (15m) or a time (required)")
	f.BoolVar(&create, "create", false, "reset a group no broker knows yet (creating its offsets)")
	return cmd
}
