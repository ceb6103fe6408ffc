package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func newTopicCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, inspect and delete topics",
		Example: `  runnelctl topic create orders --queues 8
  runnelctl topic list
  runnelctl topic route orders
  runnelctl topic stats orders
  runnelctl topic delete orders`,
	}
	cmd.AddCommand(newTopicCreateCmd(a), newTopicListCmd(a), newTopicRouteCmd(a), newTopicDeleteCmd(a), newTopicStatsCmd(a))
	return cmd
}

func newTopicCreateCmd(a *app) *cobra.Command {
	var (
		spec   admin.TopicSpec
		queues int
		perm   string
	)
	cmd := &cobra.Command{
		Use:   "create TOPIC",
		Short: "Create or update a topic on brokers",
		Long: `Create a topic, or update its queue counts and permissions, on every master of a
cluster (--cluster), or on named broker groups or addresses (--broker). With
neither, the name server must know exactly one cluster, which is used.`,
		Example: `  runnelctl topic create orders
  runnelctl topic create orders --queues 16 --cluster DefaultCluster
  runnelctl topic create audit --broker broker-a --read-queues 4 --write-queues 4 --perm R
  runnelctl topic create payments --order`,
		Args: exactArgs(1, "the topic name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.Topic = args[0]
			if queues != 0 {
				if cmd.Flags().Changed("read-queues") || cmd.Flags().Changed("write-queues") {
					return fmt.Errorf("--queues and --read-queues/--write-queues exclude each other")
				}
				spec.ReadQueueNums, spec.WriteQueueNums = queues, queues
			}
			p, err := parsePerm(perm)
			if err != nil {
				return err
			}
			spec.Perm = p
			adm, err := a.admin()
			if err != nil {
				return err
			}
			nodes, err := adm.CreateTopic(cmd.Context(), spec)
			if err != nil {
				return err
			}
			return printNodes(a, "created", nodes)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&spec.Cluster, "cluster", "c", "", "create on every master of this cluster")
	f.StringSliceVarP(&spec.Brokers, "broker", "b", nil, "create on these broker groups or host:port addresses (repeat or comma-separate)")
	f.IntVarP(&queues, "queues", "q", 0, "read and write queue count (default 8)")
	f.IntVarP(&spec.ReadQueueNums, "read-queues", "r", 0, "read queue count (default 8)")
	f.IntVarP(&spec.WriteQueueNums, "write-queues", "w", 0, "write queue count (default 8)")
	f.StringVarP(&perm, "perm", "p", "RW", "permission: RW, R, W, or RocketMQ's number (6 = RW, 4 = R, 2 = W)")
	f.BoolVar(&spec.Order, "order", false, "mark the topic as ordered")
	return cmd
}

// parsePerm reads "RW"/"R"/"W" (any case, "-" ignored) or a number.
func parsePerm(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > 15 {
			return 0, fmt.Errorf("--perm %d: want 1..15", n)
		}
		return n, nil
	}
	p := 0
	for _, c := range strings.ToUpper(s) {
		switch c {
		case 'R':
			p |= protocol.PermRead
		case 'W':
			p |= protocol.PermWrite
		case 'X':
			p |= protocol.PermInherit
		case '-':
		default:
			return 0, fmt.Errorf("--perm %q: want letters R, W (and X) or a number", s)
		}
	}
	if p == 0 {
		return 0, fmt.Errorf("--perm %q grants nothing", s)
	}
	return p, nil
}

// printNodes reports the brokers a write went to.
func printNodes(a *app, what string, nodes []admin.Node) error {
	if a.output == "json" {
		if nodes == nil {
			nodes = []admin.Node{}
		}
		return writeJSON(a.stdout, nodes)
	}
	t := newTable(a.stdout, "BROKER", "ADDRESS", "RESULT")
	for _, n := range nodes {
		t.row(dash(n.Name), n.Addr, what)
	}
	return t.flush()
}

// systemTopic reports whether t is one of RocketMQ's internal topics.
func systemTopic(t string) bool {
	switch t {
	case protocol.DefaultTopicKey, "SCHEDULE_TOPIC_XXXX", "OFFSET_MOVED_EVENT", "SELF_TEST_TOPIC",
		"BenchmarkTest", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
		"TRANS_CHECK_MAX_TIME_TOPIC", "rmq_sys_REVIVE_LOG":
		return true
	}
	return strings.HasPrefix(t, "%RETRY%") || strings.HasPrefix(t, "%DLQ%") ||
		strings.HasPrefix(t, "rmq_sys_") || strings.HasPrefix(t, "RMQ_SYS_")
}

func newTopicListCmd(a *app) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Long: `List the topics the name server knows. System topics (TBW102, SCHEDULE_TOPIC_XXXX,
rmq_sys_*, the topics named after clusters and brokers, <cluster>_REPLY_TOPIC) and the %RETRY% and %DLQ%
topics of consumer groups are hidden unless --all is given.`,
		Example: `  runnelctl topic list
  runnelctl topic list --all -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			topics, err := adm.TopicList(cmd.Context())
			if err != nil {
				return err
			}
			if !all {
				brokers, err := adm.Brokers(cmd.Context())
				if err != nil {
					return err
				}
				// Brokers also register topics named after their cluster
				// and broker group, and <cluster>_REPLY_TOPIC.
				names := map[string]bool{}
				for _, b := range brokers {
					names[b.Cluster], names[b.Name], names[b.Cluster+"_REPLY_TOPIC"] = true, true, true
				}
				topics = slices.DeleteFunc(topics, func(t string) bool { return systemTopic(t) || names[t] })
			}
			if a.output == "json" {
				if topics == nil {
					topics = []string{}
				}
				return writeJSON(a.stdout, topics)
			}
			for _, t := range topics {
				fmt.Fprintln(a.stdout, t)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include system, retry and dead-letter topics")
	return cmd
}

func newTopicRouteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "route TOPIC",
		Short: "Show which brokers serve a topic",
		Long:  "Show a topic's route: each broker group serving it, its address(es), queue counts and permission.",
		Example: `  runnelctl topic route orders
  runnelctl topic route orders -o json`,
		Args: exactArgs(1, "the topic name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			route, err := adm.TopicRoute(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.output == "json" {
				return writeJSON(a.stdout, route)
			}
			addrs := map[string]protocol.BrokerData{}
			for _, bd := range route.BrokerDatas {
				addrs[bd.BrokerName] = bd
			}
			qds := slices.Clone(route.QueueDatas)
			slices.SortFunc(qds, func(x, y protocol.QueueData) int { return strings.Compare(x.BrokerName, y.BrokerName) })
			t := newTable(a.stdout, "BROKER", "MASTER", "SLAVES", "READ QUEUES", "WRITE QUEUES", "PERM")
			for _, q := range qds {
				bd := addrs[q.BrokerName]
				var slaves []string
				for id, addr := range bd.BrokerAddrs {
					if id != protocol.MasterID {
						slaves = append(slaves, addr)
					}
				}
				slices.Sort(slaves)
				t.row(q.BrokerName, dash(bd.MasterAddr()), dash(strings.Join(slaves, ",")), q.ReadQueueNums, q.WriteQueueNums, protocol.PermString(q.Perm))
			}
			return t.flush()
		},
	}
}

func newTopicDeleteCmd(a *app) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:   "delete TOPIC",
		Short: "Delete a topic from brokers and name servers",
		Long: `Delete a topic from every master of --cluster (every cluster when omitted), with its
messages and the consumer offsets on it, then from every name server.`,
		Example: `  runnelctl topic delete orders
  runnelctl topic delete orders --cluster DefaultCluster`,
		Args: exactArgs(1, "the topic name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			nodes, err := adm.DeleteTopic(cmd.Context(), args[0], cluster)
			if err != nil {
				return err
			}
			return printNodes(a, "deleted", nodes)
		},
	}
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "delete only from this cluster's brokers")
	return cmd
}

func newTopicStatsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stats TOPIC",
		Short: "Show each queue's offsets and last message time",
		Long:  "Show, for every queue of a topic on every broker, the min and max offset (the message count is their difference) and the store time of the newest message.",
		Example: `  runnelctl topic stats orders
  runnelctl topic stats orders -o json`,
		Args: exactArgs(1, "the topic name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			stats, err := adm.TopicStats(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.output == "json" {
				if stats == nil {
					stats = []admin.QueueStats{}
				}
				return writeJSON(a.stdout, stats)
			}
			t := newTable(a.stdout, "BROKER", "QUEUE", "MIN OFFSET", "MAX OFFSET", "MESSAGES", "LAST UPDATE")
			var total int64
			for _, s := range stats {
				t.row(s.Broker, s.QueueID, s.MinOffset, s.MaxOffset, s.MaxOffset-s.MinOffset, msTime(s.LastUpdate))
				total += s.MaxOffset - s.MinOffset
			}
			t.row("TOTAL", "", "", "", total, "")
			return t.flush()
		},
	}
}
