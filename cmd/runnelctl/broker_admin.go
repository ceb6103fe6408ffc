package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/groupconf"
)

// Broker administration that changes things: write permission on the
// name servers (wipe-write-perm, add-write-perm) and a broker's
// configuration at run time (update-config).

func newBrokerWipeWritePermCmd(a *app) *cobra.Command {
	return newWritePermCmd(a, "wipe-write-perm", "wipeWritePerm",
		"Stop producers sending to a broker group (its routes lose write permission)",
		`Take write permission from every topic of a broker group in the routes of every
name server (WIPE_WRITE_PERM_OF_BROKER, mqadmin wipeWritePerm): producers stop
sending there once they refresh their routes (within 30 s for the official
clients), consumers go on reading. Use it to drain a broker before taking it
down. The broker itself is not told: it lasts until add-write-perm, or until the
broker registers a changed topic table (a topic created or updated there).`,
		(*admin.Admin).WipeWritePerm)
}

func newBrokerAddWritePermCmd(a *app) *cobra.Command {
	return newWritePermCmd(a, "add-write-perm", "addWritePerm",
		"Let producers send to a broker group again (its routes regain write permission)",
		`Give every topic of a broker group read and write permission in the routes of
every name server (ADD_WRITE_PERM_OF_BROKER, mqadmin addWritePerm), undoing
wipe-write-perm. As in RocketMQ, the perm becomes exactly read+write.`,
		(*admin.Admin).AddWritePerm)
}

func newWritePermCmd(a *app, use, mqadmin, short, long string, do func(*admin.Admin, context.Context, string) ([]admin.NamesrvTopics, error)) *cobra.Command {
	var broker string
	cmd := &cobra.Command{
		Use:   use + " --broker BROKER_NAME",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  runnelctl broker %s --broker broker-a
  runnelctl %s -b broker-a -n 127.0.0.1:9876`, use, mqadmin),
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if broker == "" {
				return fmt.Errorf("broker %s needs --broker (a broker group name, as `broker list` shows)", use)
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			res, err := do(adm, cmd.Context(), broker)
			return printResult(a, res, err, func(res []admin.NamesrvTopics) error {
				t := newTable(a.stdout, "NAME SERVER", "TOPICS CHANGED")
				for _, r := range res {
					t.row(r.Namesrv, r.Topics)
				}
				if err := t.flush(); err != nil {
					return err
				}
				for _, r := range res {
					if r.Topics == 0 {
						fmt.Fprintf(a.stderr, "name server %s routes no topic of broker %q (is it the broker group's name?)\n", r.Namesrv, broker)
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&broker, "broker", "b", "", "broker group name (required)")
	return cmd
}

func newBrokerUpdateConfigCmd(a *app) *cobra.Command {
	var target brokerTarget
	var key, value string
	cmd := &cobra.Command{
		Use:   "update-config [--broker B] KEY=VALUE... | -k KEY -v VALUE",
		Short: "Change brokers' configuration at run time",
		Long: `Change configuration keys of running brokers (UPDATE_BROKER_CONFIG, mqadmin
updateBrokerConfig), on every broker group's master unless --broker or --cluster
(its masters; --slaves adds its slaves) names others.
The keys that change at run time:

  brokerPermission  the broker's own perm: 6 read and write, 4 read only
                    (its topics register without write, so producers go
                    elsewhere), 2 write only (pulls are refused)
  maxMessageSize    the largest message body accepted, in bytes (up to 4 MiB,
                    or the value the broker started with if larger)
  timerMaxDelaySec  the longest a timer message may wait, in seconds

A broker applies all the keys given or none, and keeps them across restarts in
broker-runtime.conf in its store directory (broker.conf is not rewritten;
delete that file to go back to broker.conf's values). Other keys are refused
with the list above. "broker config" shows the values in force.`,
		Example: `  runnelctl broker update-config maxMessageSize=1048576
  runnelctl broker update-config --broker broker-a brokerPermission=4
  runnelctl updateBrokerConfig -b broker-a -k timerMaxDelaySec -v 3600`,
		RunE: func(cmd *cobra.Command, args []string) error {
			props := map[string]string{}
			for _, kv := range args {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("%q: want KEY=VALUE", kv)
				}
				props[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			if key != "" {
				props[key] = value
			} else if cmd.Flags().Changed("value") {
				return fmt.Errorf("--value needs --key")
			}
			if len(props) == 0 {
				return fmt.Errorf("broker update-config needs KEY=VALUE arguments or -k KEY -v VALUE")
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			nodes, err := target.nodes(cmd.Context(), adm, false)
			if err != nil {
				return err
			}
			for i, n := range nodes {
				if err := adm.UpdateBrokerConfig(cmd.Context(), n, props); err != nil {
					if i > 0 {
						_ = printNodes(a, "updated", nodes[:i])
					}
					return err
				}
			}
			return printNodes(a, "updated", nodes)
		},
	}
	f := cmd.Flags()
	target.register(f, true)
	f.StringVarP(&key, "key", "k", "", "the key to change (mqadmin's form)")
	f.StringVarP(&value, "value", "v", "", "its new value")
	return cmd
}

func newGroupUpdateCmd(a *app) *cobra.Command {
	var (
		group, cluster                string
		brokers                       []string
		consume, fromMin, broadcast   bool
		notify                        bool
		retryQueues, retryMax         int
		sysFlag, timeoutMin           int
		brokerID, whichBrokerWhenSlow int64
		orderly                       bool
		retryPolicy, attributes       string
	)
	cmd := &cobra.Command{
		Use:   "update --group GROUP [flags]",
		Short: "Create or change a consumer group's configuration",
		Long: `Create or change a consumer group's subscription config on every master of
--cluster (every cluster when omitted) or on the --broker given
(UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, mqadmin updateSubGroup). Only the flags
given change: the rest keep the values in force on each broker (mqadmin resets
them to the defaults). The brokers keep the config in their store.

What the brokers do with it: --consume-enable=false refuses the group's pulls
(NO_PERMISSION), --consume-broadcast=false refuses them from broadcasting
consumers, --retry-max-times is how often a message is redelivered before it
goes to %DLQ%GROUP when the consumer does not say (RocketMQ's clients and ours
say 16 unless set, so it is for those that send none), --retry-queues the queue count
of a new %RETRY%GROUP topic. The other fields are kept and listed for tools.
--consume-orderly, --retry-policy and --attributes are RocketMQ 5's: they are
sent as a Java broker takes them, and Runnel's brokers do not keep them yet.
"group delete" removes the config with the group.`,
		Example: `  runnelctl group update --group billing --consume-enable=false
  runnelctl group update --group billing --retry-max-times 3
  runnelctl updateSubGroup -g billing -r 3 -c DefaultCluster`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return fmt.Errorf("group update needs --group")
			}
			fl := cmd.Flags()
			adm, err := a.admin()
			if err != nil {
				return err
			}
			var policy json.RawMessage
			if fl.Changed("retry-policy") {
				if policy, err = admin.ParseRetryPolicy(retryPolicy); err != nil {
					return err
				}
			}
			var attrs map[string]string
			if fl.Changed("attributes") {
				if attrs, err = admin.ParseAttributes(attributes); err != nil {
					return err
				}
			}
			nodes, err := adm.UpdateGroupSettings(cmd.Context(), group, cluster, brokers, func(g *admin.GroupSettings) {
				for name, apply := range map[string]func(){
					"consume-orderly":        func() { g.ConsumeMessageOrderly = orderly },
					"retry-policy":           func() { g.GroupRetryPolicy = policy },
					"attributes":             func() { g.Attributes = attrs },
					"consume-enable":         func() { g.ConsumeEnable = consume },
					"consume-from-min":       func() { g.ConsumeFromMinEnable = fromMin },
					"consume-broadcast":      func() { g.ConsumeBroadcastEnable = broadcast },
					"notify-ids-changed":     func() { g.NotifyConsumerIdsChangedEnable = notify },
					"retry-queues":           func() { g.RetryQueueNums = retryQueues },
					"retry-max-times":        func() { g.RetryMaxTimes = retryMax },
					"broker-id":              func() { g.BrokerID = brokerID },
					"which-broker-when-slow": func() { g.WhichBrokerWhenConsumeSlowly = whichBrokerWhenSlow },
					"group-sys-flag":         func() { g.GroupSysFlag = sysFlag },
					"consume-timeout":        func() { g.ConsumeTimeoutMinute = timeoutMin },
				} {
					if fl.Changed(name) {
						apply()
					}
				}
			})
			if err != nil {
				if len(nodes) > 0 {
					_ = printNodes(a, "updated", nodes)
				}
				return err
			}
			return printNodes(a, "updated", nodes)
		},
	}
	d := groupconf.New("")
	f := cmd.Flags()
	f.StringVarP(&group, "group", "g", "", "the consumer group (required)")
	f.StringVarP(&cluster, "cluster", "c", "", "only this cluster's masters")
	f.StringSliceVarP(&brokers, "broker", "b", nil, "only these broker groups or host:port addresses")
	f.BoolVarP(&consume, "consume-enable", "s", d.ConsumeEnable, "the group may pull (consumeEnable)")
	f.BoolVarP(&fromMin, "consume-from-min", "m", d.ConsumeFromMinEnable, "consumeFromMinEnable")
	f.BoolVarP(&broadcast, "consume-broadcast", "d", d.ConsumeBroadcastEnable, "broadcasting consumers may pull (consumeBroadcastEnable)")
	f.BoolVarP(&notify, "notify-ids-changed", "a", d.NotifyConsumerIdsChangedEnable, "notifyConsumerIdsChangedEnable")
	f.IntVarP(&retryQueues, "retry-queues", "q", d.RetryQueueNums, "queues of a new %RETRY% topic (retryQueueNums)")
	f.IntVarP(&retryMax, "retry-max-times", "r", d.RetryMaxTimes, "redeliveries before the dead-letter queue (retryMaxTimes)")
	f.Int64VarP(&brokerID, "broker-id", "i", d.BrokerID, "brokerId to consume from")
	f.Int64VarP(&whichBrokerWhenSlow, "which-broker-when-slow", "w", d.WhichBrokerWhenConsumeSlowly, "whichBrokerWhenConsumeSlowly")
	f.IntVar(&sysFlag, "group-sys-flag", d.GroupSysFlag, "groupSysFlag")
	f.IntVar(&timeoutMin, "consume-timeout", d.ConsumeTimeoutMinute, "consumeTimeoutMinute")
	f.BoolVar(&orderly, "consume-orderly", false, "consumeMessageOrderly (RocketMQ 5)")
	f.StringVar(&retryPolicy, "retry-policy", "", `groupRetryPolicy as JSON, e.g. '{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}}' (RocketMQ 5)`)
	f.StringVar(&attributes, "attributes", "", "attribute changes: +key=value,-key (RocketMQ 5)")
	_ = cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
	return cmd
}
