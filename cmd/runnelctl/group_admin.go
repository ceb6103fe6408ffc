package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/spf13/cobra"
)

func newGroupDeleteCmd(a *app) *cobra.Command {
	var group, cluster string
	var keepOffsets, yes bool
	cmd := &cobra.Command{
		Use:   "delete --group GROUP",
		Short: "Delete a consumer group: its offsets and its %RETRY% and %DLQ% topics",
		Long: `Delete a consumer group from every master of --cluster (every cluster when
omitted), as mqadmin deleteSubGroup does: its committed offsets go (unless
--keep-offsets), and so do its %RETRY% and %DLQ% topics with their messages. A
group with consumers online is listed again by their next heartbeat.

On a terminal it asks first; --yes (or stdin not being a terminal) skips the
question.`,
		Example: `  runnelctl group delete --group billing-old
  runnelctl group delete --group billing --keep-offsets --yes`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("--group is required")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			what := "Delete group " + group + " with its offsets, %RETRY% and %DLQ% topics"
			if keepOffsets {
				what = "Delete group " + group + "'s %RETRY% and %DLQ% topics (keeping its offsets)"
			}
			if err := a.confirm(yes, what); err != nil {
				return err
			}
			nodes, topics, err := adm.DeleteGroup(cmd.Context(), group, cluster, !keepOffsets)
			if err != nil {
				return err
			}
			if len(topics) > 0 {
				fmt.Fprintf(a.stderr, "deleted topics %s\n", strings.Join(topics, ", "))
			}
			return printNodes(a, "deleted", nodes)
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "the consumer group (required)")
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "delete only from this cluster's brokers")
	cmd.Flags().BoolVar(&keepOffsets, "keep-offsets", false, "keep the group's committed offsets")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func newGroupCloneCmd(a *app) *cobra.Command {
	var src, dest, topic string
	var offline bool
	cmd := &cobra.Command{
		Use:   "clone-offset --src GROUP --dest GROUP [--topic TOPIC]",
		Short: "Copy a group's committed offsets to another group",
		Long: `Copy the committed offsets of --src to --dest on every master, on --topic or on
every topic --src has offsets on (mqadmin cloneGroupOffset). A new group then
starts where the old one is. Unless --offline, a broker skips a topic the
online source group does not subscribe to.`,
		Example: `  runnelctl group clone-offset --src billing --dest billing-v2
  runnelctl group clone-offset --src billing --dest billing-v2 --topic orders`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if src == "" || dest == "" {
				return fmt.Errorf("--src and --dest are required")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			nodes, err := adm.CloneGroupOffset(cmd.Context(), src, dest, topic, offline)
			if err != nil {
				return err
			}
			return printNodes(a, "cloned", nodes)
		},
	}
	cmd.Flags().StringVarP(&src, "src", "s", "", "the group to copy from (required)")
	cmd.Flags().StringVarP(&dest, "dest", "d", "", "the group to copy to (required)")
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "only this topic")
	cmd.Flags().BoolVar(&offline, "offline", false, "clone topics the online source group does not subscribe to as well")
	_ = cmd.RegisterFlagCompletionFunc("src", a.completeGroups)
	_ = cmd.RegisterFlagCompletionFunc("dest", a.completeGroups)
	return cmd
}

func newGroupConfigCmd(a *app) *cobra.Command {
	var arg groupArg
	var target brokerTarget
	cmd := &cobra.Command{
		Use:   "config [GROUP]",
		Short: "Show a consumer group's configuration on each broker",
		Long: `Show a consumer group's subscription config on each broker group's master (or
the brokers --broker or --cluster names), under RocketMQ's field names (mqadmin
getConsumerConfig). A broker that keeps no config for the group shows the
defaults it applies, and a note on stderr says so. The group is the argument
or --group.`,
		Example: `  runnelctl group config billing
  runnelctl group config --group billing -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			group, err := arg.get(cmd, args, true)
			if err != nil {
				return err
			}
			return a.perBroker(cmd.Context(), target, func(adm *admin.Admin, ctx context.Context, n admin.Node) (map[string]string, error) {
				g, found, err := adm.GroupSettingsOn(ctx, n, group)
				if err != nil {
					return nil, err
				}
				if !found {
					fmt.Fprintf(a.stderr, "note: %s keeps no config of group %s: its defaults are shown\n", n, group)
				}
				return flatJSON(g)
			})
		},
	}
	arg.register(a, cmd)
	target.register(cmd.Flags(), false)
	return cmd
}

// flatJSON is v's JSON object as key/value strings (nested values as
// JSON).
func flatJSON(v any) (map[string]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, raw := range m {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		out[k] = s
	}
	return out, nil
}
