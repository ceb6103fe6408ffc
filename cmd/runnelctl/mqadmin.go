package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/queue"
)

// The commands mqadmin and rocketmq-dashboard have that the brokers
// answer: broker status and config, producers of a group, statistics of
// every topic, printing a queue's messages by offset, and a client
// consuming one message directly; and the mqadmin names as hidden
// top-level aliases.

// mqadminAliases maps mqadmin command names to runnelctl command paths.
var mqadminAliases = map[string][]string{
	"clusterList":          {"cluster", "list"},
	"brokerStatus":         {"broker", "status"},
	"getBrokerConfig":      {"broker", "config"},
	"updateBrokerConfig":   {"broker", "update-config"},
	"wipeWritePerm":        {"broker", "wipe-write-perm"},
	"addWritePerm":         {"broker", "add-write-perm"},
	"updateSubGroup":       {"group", "update"},
	"topicList":            {"topic", "list"},
	"topicRoute":           {"topic", "route"},
	"topicStatus":          {"topic", "stats"},
	"updateTopic":          {"topic", "create"},
	"updateTopicPerm":      {"topic", "update-perm"},
	"deleteTopic":          {"topic", "delete"},
	"statsAll":             {"stats", "all"},
	"consumerProgress":     {"group", "progress"},
	"consumerConnection":   {"group", "consumers"},
	"consumerStatus":       {"group", "consumers"},
	"producerConnection":   {"group", "producers"},
	"resetOffsetByTime":    {"group", "reset-offset"},
	"deleteSubGroup":       {"group", "delete"},
	"cloneGroupOffset":     {"group", "clone-offset"},
	"queryMsgById":         {"message", "get"},
	"queryMsgByKey":        {"message", "query"},
	"queryMsgByOffset":     {"message", "print"},
	"printMsg":             {"message", "print"},
	"consumeMessage":       {"message", "print"},
	"directConsumeMessage": {"message", "consume-directly"},
	"sendMessage":          {"send"},
}

// mqadminPresets are flags an alias sets, where the mqadmin command does
// more than the runnelctl one by default.
var mqadminPresets = map[string]map[string]string{
	"consumerStatus": {"running": "true"}, // mqadmin consumerStatus shows each client's running info
}

// addMqadminAliases adds each mqadmin name as a hidden top-level command
// built by the same constructor as the command it stands for, so that its
// flags and behaviour are the same.
func addMqadminAliases(root *cobra.Command, a *app) {
	for _, name := range slices.Sorted(maps.Keys(mqadminAliases)) {
		path := mqadminAliases[name]
		c := buildCommand(a, path)
		if c == nil {
			panic("runnelctl: mqadmin alias " + name + " names no command")
		}
		c.Use = name + " " + usageArgs(c.Use)
		c.Hidden = true
		c.Aliases = nil
		c.Short += " (mqadmin " + name + ")"
		for flag, value := range mqadminPresets[name] {
			if err := c.Flags().Set(flag, value); err != nil {
				panic("runnelctl: mqadmin alias " + name + ": " + err.Error())
			}
		}
		root.AddCommand(c)
	}
}

// buildCommand returns a fresh instance of the command at path.
func buildCommand(a *app, path []string) *cobra.Command {
	tmp := &cobra.Command{Use: "tmp"}
	tmp.AddCommand(newClusterCmd(a), newBrokerCmd(a), newTopicCmd(a), newSendCmd(a), newGroupCmd(a), newMessageCmd(a), newStatsCmd(a))
	c, rest, err := tmp.Find(path)
	if err != nil || len(rest) > 0 || c == tmp {
		return nil
	}
	c.Parent().RemoveCommand(c)
	return c
}

// usageArgs is a Use line without its command name.
func usageArgs(use string) string {
	for i, r := range use {
		if r == ' ' {
			return use[i+1:]
		}
	}
	return ""
}

func newBrokerStatusCmd(a *app) *cobra.Command {
	var brokers []string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show brokers' runtime figures",
		Long: `Show each broker's runtime figures (GET_BROKER_RUNTIME_INFO, mqadmin
brokerStatus): version, boot time, commit log offsets, topic count and the
like. Every broker group's master unless --broker names some.`,
		Example: `  runnelctl broker status
  runnelctl broker status --broker broker-a -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.perBroker(cmd.Context(), brokers, (*admin.Admin).BrokerRuntimeInfo)
		},
	}
	cmd.Flags().StringSliceVarP(&brokers, "broker", "b", nil, "broker groups or host:port addresses (default: every broker)")
	return cmd
}

func newBrokerConfigCmd(a *app) *cobra.Command {
	var brokers []string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show brokers' configuration in force",
		Long: `Show each broker's configuration in force under RocketMQ's broker.conf key names
(GET_BROKER_CONFIG, mqadmin getBrokerConfig). Every broker group's master
unless --broker names some.`,
		Example: `  runnelctl broker config
  runnelctl broker config --broker 127.0.0.1:10911 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.perBroker(cmd.Context(), brokers, (*admin.Admin).BrokerConfig)
		},
	}
	cmd.Flags().StringSliceVarP(&brokers, "broker", "b", nil, "broker groups or host:port addresses (default: every broker)")
	return cmd
}

// brokerTable is one broker's key/value answer in -o json.
type brokerTable struct {
	Broker string            `json:"brokerName"`
	Addr   string            `json:"addr"`
	Values map[string]string `json:"values"`
}

// perBroker prints ask's key/value table of every broker in brokers.
func (a *app) perBroker(ctx context.Context, brokers []string, ask func(*admin.Admin, context.Context, admin.Node) (map[string]string, error)) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	nodes, err := adm.BrokerNodes(ctx, brokers)
	if err != nil {
		return err
	}
	var out []brokerTable
	for _, n := range nodes {
		kv, err := ask(adm, ctx, n)
		if err != nil {
			return err
		}
		out = append(out, brokerTable{Broker: n.Name, Addr: n.Addr, Values: kv})
	}
	if a.output == "json" {
		return writeJSON(a.stdout, out)
	}
	t := newTable(a.stdout, "BROKER", "KEY", "VALUE")
	for _, b := range out {
		for _, k := range slices.Sorted(maps.Keys(b.Values)) {
			t.row(dash(b.Broker)+" "+b.Addr, k, dash(b.Values[k]))
		}
	}
	return t.flush()
}

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
			if err != nil {
				return err
			}
			if a.output == "json" {
				return writeJSON(a.stdout, clients)
			}
			t := newTable(a.stdout, "BROKER", "CLIENT ID", "ADDRESS", "LANGUAGE", "VERSION")
			for _, c := range clients {
				t.row(c.Broker, c.ClientID, dash(c.Addr), dash(c.Language), versionName(c.Version))
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "producer group (required)")
	return cmd
}

func newStatsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "stats",
		Short:   "Statistics over the whole cluster",
		Example: `  runnelctl stats all`,
	}
	var all bool
	statsAll := &cobra.Command{
		Use:   "all",
		Short: "Messages and lag of every topic and its consumer groups",
		Long: `For every topic (system topics with --all): the messages it holds (max - min
offset over its queues) and, per consumer group of it, the group's lag (mqadmin
statsAll, without its TPS figures, which Runnel's brokers do not keep yet).`,
		Example: `  runnelctl stats all
  runnelctl stats all -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.statsAll(cmd.Context(), all)
		},
	}
	statsAll.Flags().BoolVarP(&all, "all", "a", false, "include system, retry and dead-letter topics")
	cmd.AddCommand(statsAll)
	return cmd
}

// statsRow is one topic and group in `stats all`; Group is "" for a topic
// nobody consumes.
type statsRow struct {
	Topic    string `json:"topic"`
	Messages int64  `json:"messages"`
	Group    string `json:"group,omitempty"`
	Lag      int64  `json:"lag"`
}

func (a *app) statsAll(ctx context.Context, all bool) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	topics, err := adm.TopicList(ctx)
	if err != nil {
		return err
	}
	if !all {
		topics = slices.DeleteFunc(topics, admin.IsSystemTopic)
	}
	rows := []statsRow{}
	for _, topic := range topics {
		stats, err := adm.TopicStats(ctx, topic)
		if err != nil {
			continue // a topic named after a cluster or broker has no stats
		}
		var msgs int64
		for _, s := range stats {
			msgs += s.MaxOffset - s.MinOffset
		}
		groups, err := adm.TopicConsumers(ctx, topic)
		if err != nil {
			return err
		}
		if len(groups) == 0 {
			rows = append(rows, statsRow{Topic: topic, Messages: msgs})
		}
		for _, g := range groups {
			progress, err := adm.ConsumerProgress(ctx, g, topic)
			if err != nil {
				return err
			}
			rows = append(rows, statsRow{Topic: topic, Messages: msgs, Group: g, Lag: admin.TotalLag(progress)})
		}
	}
	if a.output == "json" {
		return writeJSON(a.stdout, rows)
	}
	t := newTable(a.stdout, "TOPIC", "MESSAGES", "GROUP", "LAG")
	for _, r := range rows {
		lag := "-"
		if r.Group != "" {
			lag = fmt.Sprint(r.Lag)
		}
		t.row(r.Topic, r.Messages, dash(r.Group), lag)
	}
	return t.flush()
}

func newMessagePrintCmd(a *app) *cobra.Command {
	var (
		topic, broker, tag string
		queueID            int
		offset             int64
		count              int
	)
	cmd := &cobra.Command{
		Use:   "print --topic TOPIC [--broker B --queue Q] [--offset N] [--count N]",
		Short: "Print a queue's messages from an offset",
		Long: `Pull messages from a topic's queues, from --offset (default: each queue's oldest),
up to --count per queue, and print them; no consumer group's offsets move
(mqadmin printMsg / queryMsgByOffset). --queue and --broker pick one queue.`,
		Example: `  runnelctl message print --topic orders --count 5
  runnelctl message print --topic orders --broker broker-a --queue 0 --offset 42 --count 1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if topic == "" {
				return fmt.Errorf("message print needs --topic")
			}
			if count < 1 || count > 1024 {
				return fmt.Errorf("--count %d: want 1..1024", count)
			}
			fl := cmd.Flags()
			return a.printQueues(cmd.Context(), topic, broker, tag, queueID, fl.Changed("queue"), offset, fl.Changed("offset"), count)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&topic, "topic", "t", "", "topic (required)")
	f.StringVarP(&broker, "broker", "b", "", "only this broker group's queues")
	f.IntVarP(&queueID, "queue", "i", 0, "only this queue id")
	f.Int64Var(&offset, "offset", 0, "first queue offset (default: each queue's oldest)")
	f.IntVar(&count, "count", 16, "most messages per queue")
	f.StringVar(&tag, "tag", "*", "tag expression")
	return cmd
}

func (a *app) printQueues(ctx context.Context, topic, broker, tag string, queueID int, oneQueue bool, from int64, fromSet bool, count int) error {
	cfg := client.DefaultPullConsumerConfig()
	cfg.Client.NameServerAddrs = []string{a.namesrv}
	cfg.Client.Credentials = a.creds
	cfg.Client.InstanceName = fmt.Sprintf("runnelctl-print-%d", os.Getpid())
	cfg.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if a.timeout > 0 {
		cfg.Client.CallTimeout = a.timeout
	}
	pc, err := client.NewPullConsumer(cfg)
	if err != nil {
		return err
	}
	if err := pc.Start(ctx); err != nil {
		return err
	}
	defer func() { _ = pc.Shutdown(context.Background()) }()
	mqs, err := pc.MessageQueues(ctx, topic)
	if err != nil {
		return fmt.Errorf("topic %s: %w", topic, err)
	}
	mqs = slices.DeleteFunc(mqs, func(mq queue.MessageQueue) bool {
		return (broker != "" && mq.BrokerName != broker) || (oneQueue && int(mq.QueueID) != queueID)
	})
	if len(mqs) == 0 {
		return fmt.Errorf("topic %s has no readable queue matching --broker/--queue", topic)
	}
	var views []messageView
	for _, mq := range mqs {
		off := from
		if !fromSet {
			if off, err = pc.MinOffset(ctx, mq); err != nil {
				return err
			}
		}
		res, err := pc.Pull(ctx, mq, off, count, client.PullOptions{Expression: tag})
		if err != nil {
			return fmt.Errorf("pull %s at %d: %w", mq, off, err)
		}
		for _, m := range res.Messages {
			if a.output == "json" {
				views = append(views, viewOf(&m.MessageExt))
				continue
			}
			a.printMessage(&m.MessageExt)
			fmt.Fprintln(a.stdout)
		}
	}
	if a.output == "json" {
		if views == nil {
			views = []messageView{}
		}
		return writeJSON(a.stdout, views)
	}
	return nil
}

func newMessageConsumeDirectlyCmd(a *app) *cobra.Command {
	var group, clientID string
	cmd := &cobra.Command{
		Use:   "consume-directly OFFSET_MSG_ID --group GROUP --client CLIENT_ID",
		Short: "Have one online consumer run its listener on one message",
		Long: `Ask one online client of a group to run its listener on a stored message, named
by its offsetMsgId, outside its normal flow: no offsets move (mqadmin
directConsumeMessage; rocketmq-dashboard's "resend to consumer"). Client ids
come from runnelctl group consumers.`,
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
			res, err := adm.ConsumeMessageDirectly(cmd.Context(), group, clientID, args[0])
			if err != nil {
				return err
			}
			if a.output == "json" {
				return writeJSON(a.stdout, res)
			}
			t := newTable(a.stdout, "RESULT", "ORDER", "AUTO COMMIT", "SPENT MS", "REMARK")
			t.row(res.Result, res.Order, res.AutoCommit, res.SpentTime, dash(res.Remark))
			return t.flush()
		},
	}
	cmd.Flags().StringVarP(&group, "group", "g", "", "consumer group (required)")
	cmd.Flags().StringVar(&clientID, "client", "", "client id (required)")
	return cmd
}
