package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func newTopicCmd(a *app) *cobra.Command {
	return nounCmd("topic", "Create, list, inspect and delete topics", "", `  runnelctl topic create orders --queues 8
  runnelctl topic list
  runnelctl topic route orders
  runnelctl topic stats orders
  runnelctl topic delete orders`,
		newTopicCreateCmd(a), newTopicListCmd(a), newTopicRouteCmd(a), newTopicDeleteCmd(a), newTopicStatsCmd(a),
		newTopicPermCmd(a), newTopicConsumersCmd(a), newTopicClustersCmd(a))
}

func newTopicCreateCmd(a *app) *cobra.Command {
	var (
		spec   admin.TopicSpec
		queues int
		perm   string
		order  bool
		attrs  string
		mtype  string
	)
	cmd := &cobra.Command{
		Use:   "create TOPIC",
		Short: "Create or update a topic on brokers",
		Long: `Create a topic, or update its queue counts and permissions, on every master of a
cluster (--cluster), or on named broker groups or addresses (--broker). With
neither, the name server must know exactly one cluster, which is used.

A new topic gets 8 read and 8 write queues and perm RW unless flags say
otherwise. On a broker that already has the topic only what the flags give
changes: its queue counts, perm and order flag are kept, and the result says
"updated" instead of "created". (mqadmin updateTopic resets unset counts to 8,
which hides the queues above 8 of a larger topic.)

--attributes sends RocketMQ 5 topic attribute changes as mqadmin updateTopic -a
does: +key=value sets one, -key removes one; the keys are RocketMQ's
(message.type: UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION or MIXED;
queue.type; cleanup.policy; reserve.time) and are checked here. Runnel's brokers
keep message.type, against which RocketMQ 5 (gRPC) clients' sends are checked,
and refuse the others. --type FIFO is +message.type=FIFO.`,
		Example: `  runnelctl topic create orders
  runnelctl topic create orders --queues 16 --cluster DefaultCluster
  runnelctl topic create audit --broker broker-a --read-queues 4 --write-queues 4 --perm R
  runnelctl topic create payments --order
  runnelctl topic create shipments --attributes +message.type=FIFO
  runnelctl topic create shipments --type FIFO`,
		Args: exactArgs(1, "the topic name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.Topic = args[0]
			fl := cmd.Flags()
			for _, name := range []string{"queues", "read-queues", "write-queues"} {
				if !fl.Changed(name) {
					continue
				}
				if v, _ := fl.GetInt(name); v < 1 || v > 1024 {
					return fmt.Errorf("--%s %d: want 1..1024", name, v)
				}
			}
			if fl.Changed("queues") {
				if fl.Changed("read-queues") || fl.Changed("write-queues") {
					return fmt.Errorf("--queues and --read-queues/--write-queues exclude each other")
				}
				spec.ReadQueueNums, spec.WriteQueueNums = queues, queues
			}
			if fl.Changed("perm") {
				p, err := parsePerm(perm)
				if err != nil {
					return err
				}
				spec.Perm = p
			}
			if fl.Changed("order") {
				spec.Order = &order
			}
			if fl.Changed("attributes") {
				var err error
				if spec.Attributes, err = admin.ParseAttributes(attrs); err != nil {
					return err
				}
			}
			if fl.Changed("type") {
				if fl.Changed("attributes") {
					return fmt.Errorf("--type and --attributes exclude each other (--type T is +message.type=T)")
				}
				var err error
				if spec.Attributes, err = typeChange(mtype); err != nil {
					return err
				}
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			writes, err := adm.CreateTopic(cmd.Context(), spec)
			if err != nil {
				return err
			}
			return printWrites(a, writes)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&spec.Cluster, "cluster", "c", "", "create on every master of this cluster")
	f.StringSliceVarP(&spec.Brokers, "broker", "b", nil, "create on these broker groups or host:port addresses (repeat or comma-separate)")
	f.IntVarP(&queues, "queues", "q", 0, "read and write queue count (new topic: 8; existing: kept)")
	f.IntVarP(&spec.ReadQueueNums, "read-queues", "r", 0, "read queue count (new topic: 8; existing: kept)")
	f.IntVarP(&spec.WriteQueueNums, "write-queues", "w", 0, "write queue count (new topic: 8; existing: kept)")
	f.StringVarP(&perm, "perm", "p", "RW", "permission: RW, R, W, or RocketMQ's number (6 = RW, 4 = R, 2 = W); existing: kept")
	f.BoolVar(&order, "order", false, "mark the topic as ordered (existing: kept)")
	f.StringVar(&attrs, "attributes", "", "RocketMQ 5 attribute changes: +key=value,-key (e.g. +message.type=FIFO)")
	f.StringVar(&mtype, "type", "", "RocketMQ 5 message type: NORMAL, FIFO, DELAY, TRANSACTION or MIXED (existing: kept)")
	return cmd
}

// printWrites reports what a topic create or update did on each broker.
func printWrites(a *app, writes []admin.TopicWrite) error {
	return printList(a, writes, []string{"BROKER", "ADDRESS", "READ QUEUES", "WRITE QUEUES", "PERM", "RESULT"}, func(w admin.TopicWrite) []any {
		return []any{dash(w.Name), w.Addr, w.ReadQueueNums, w.WriteQueueNums, protocol.PermString(w.Perm), w.Result()}
	})
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
	return printList(a, nodes, []string{"BROKER", "ADDRESS", "RESULT"}, func(n admin.Node) []any {
		return []any{dash(n.Name), n.Addr, what}
	})
}

// visibleTopics is topics without the system ones (admin.IsSystemTopic's
// and admin.ClusterTopics').
func (a *app) visibleTopics(ctx context.Context, topics []string) ([]string, error) {
	adm, err := a.admin()
	if err != nil {
		return nil, err
	}
	brokers, err := adm.Brokers(ctx)
	if err != nil {
		return nil, err
	}
	names := admin.ClusterTopics(brokers)
	return slices.DeleteFunc(slices.Clone(topics), func(t string) bool { return admin.IsSystemTopic(t) || names[t] }), nil
}

func newTopicListCmd(a *app) *cobra.Command {
	var all, clusters, types bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Long: `List the topics the name server knows, under a TOPIC header. System topics
(TBW102, SCHEDULE_TOPIC_XXXX, rmq_sys_*, the topics named after clusters and
brokers, <cluster>_REPLY_TOPIC) and the %RETRY% and %DLQ% topics of consumer
groups are hidden unless --all is given. With none to show, a note on stderr
says so and stdout stays empty. --clusters lists each topic with its cluster
and its consumer groups (mqadmin topicList -c); --types each topic with its
RocketMQ 5 message type (message.type: NORMAL when unset), asked of the masters
serving it.`,
		Example: `  runnelctl topic list
  runnelctl topic list --clusters
  runnelctl topic list --types
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
			listed := len(topics)
			if !all {
				if topics, err = a.visibleTopics(cmd.Context(), topics); err != nil {
					return err
				}
			}
			if clusters {
				return a.printTopicClusters(cmd.Context(), topics)
			}
			if types {
				return printTopicTypes(cmd.Context(), a, adm, topics)
			}
			if len(topics) == 0 && a.output != "json" {
				fmt.Fprintf(a.stderr, "note: no topics yet (%d system topics hidden; --all lists them). Create one: runnelctl topic create NAME\n", listed)
				return nil
			}
			return printNames(a, "TOPIC", topics)
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include system, retry and dead-letter topics")
	cmd.Flags().BoolVar(&clusters, "clusters", false, "show each topic's cluster and consumer groups")
	cmd.Flags().BoolVar(&types, "types", false, "show each topic's RocketMQ 5 message type")
	return cmd
}

// topicCluster is a topic in one cluster, with its consumer groups.
type topicCluster struct {
	Cluster string   `json:"cluster"`
	Topic   string   `json:"topic"`
	Groups  []string `json:"groups"`
}

// topicClusters returns the clusters of the brokers that serve topic.
func (a *app) topicClusters(ctx context.Context, topic string) ([]string, error) {
	adm, err := a.admin()
	if err != nil {
		return nil, err
	}
	route, err := adm.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	brokers, err := adm.Brokers(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, qd := range route.QueueDatas {
		for _, b := range brokers {
			if b.Name == qd.BrokerName && !slices.Contains(out, b.Cluster) {
				out = append(out, b.Cluster)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// printTopicClusters prints each topic with its clusters and groups.
func (a *app) printTopicClusters(ctx context.Context, topics []string) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	rows := []topicCluster{}
	for _, topic := range topics {
		clusters, err := a.topicClusters(ctx, topic)
		if errors.Is(err, admin.ErrNotFound) {
			continue // listed, but no route (a topic named after a broker)
		} else if err != nil {
			return err
		}
		groups, err := adm.TopicConsumers(ctx, topic)
		if err != nil {
			return err
		}
		if groups == nil {
			groups = []string{}
		}
		for _, c := range clusters {
			rows = append(rows, topicCluster{Cluster: c, Topic: topic, Groups: groups})
		}
	}
	if a.output == "json" {
		return writeJSON(a.stdout, rows)
	}
	t := newTable(a.stdout, "CLUSTER", "TOPIC", "GROUPS")
	for _, r := range rows {
		t.row(r.Cluster, r.Topic, dash(strings.Join(r.Groups, ",")))
	}
	return t.flush()
}

func newTopicClustersCmd(a *app) *cobra.Command {
	return newTopicArgCmd(a, "clusters", "List the clusters a topic is served in",
		"List the clusters of the broker groups that serve a topic (mqadmin topicClusterList).",
		`  runnelctl topic clusters orders
  runnelctl topic clusters orders -o json`,
		func(ctx context.Context, _ *admin.Admin, topic string) error {
			clusters, err := a.topicClusters(ctx, topic)
			if err != nil {
				return err
			}
			return printNames(a, "CLUSTER", clusters)
		})
}

// newTopicArgCmd is a topic command of one TOPIC argument; run gets the
// admin client and the topic.
func newTopicArgCmd(a *app, use, short, long, example string, run func(ctx context.Context, adm *admin.Admin, topic string) error) *cobra.Command {
	return &cobra.Command{
		Use: use + " TOPIC", Short: short, Long: long, Example: example,
		Args:              exactArgs(1, "the topic name"),
		ValidArgsFunction: a.completeTopicArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			return run(cmd.Context(), adm, args[0])
		},
	}
}

// printNames prints a list of names under header, or as a JSON array.
func printNames(a *app, header string, names []string) error {
	if a.output == "json" {
		return writeJSONList(a.stdout, names)
	}
	fmt.Fprintln(a.stdout, header)
	for _, n := range names {
		fmt.Fprintln(a.stdout, n)
	}
	return nil
}

func newTopicRouteCmd(a *app) *cobra.Command {
	return newTopicArgCmd(a, "route", "Show which brokers serve a topic", "Show a topic's route: each broker group serving it, its address(es), queue counts, permission and RocketMQ 5 message type (asked of its master).", `  runnelctl topic route orders
  runnelctl topic route orders -o json`, func(ctx context.Context, adm *admin.Admin, topic string) error {
		route, err := adm.TopicRoute(ctx, topic)
		return printResult(a, route, err, func(route *protocol.TopicRouteData) error {
			addrs := map[string]protocol.BrokerData{}
			for _, bd := range route.BrokerDatas {
				addrs[bd.BrokerName] = bd
			}
			qds := slices.Clone(route.QueueDatas)
			slices.SortFunc(qds, func(x, y protocol.QueueData) int { return strings.Compare(x.BrokerName, y.BrokerName) })
			t := newTable(a.stdout, "BROKER", "MASTER", "SLAVES", "READ QUEUES", "WRITE QUEUES", "PERM", "TYPE")
			for _, q := range qds {
				bd := addrs[q.BrokerName]
				var slaves []string
				for id, addr := range bd.BrokerAddrs {
					if id != protocol.MasterID {
						slaves = append(slaves, addr)
					}
				}
				slices.Sort(slaves)
				t.row(q.BrokerName, dash(bd.MasterAddr()), dash(strings.Join(slaves, ",")), q.ReadQueueNums, q.WriteQueueNums,
					protocol.PermString(q.Perm), brokerType(ctx, adm, route, q.BrokerName, topic))
			}
			return t.flush()
		})
	})
}

func newTopicDeleteCmd(a *app) *cobra.Command {
	var cluster string
	var yes bool
	cmd := newTopicArgCmd(a, "delete", "Delete a topic from brokers and name servers", `Delete a topic from every master of --cluster (every cluster when omitted), with its
messages and the consumer offsets on it, then from every name server. A topic
the name server does not know fails, and nothing is deleted.

On a terminal it asks first; --yes (or stdin not being a terminal, as in a
script) skips the question.`, `  runnelctl topic delete orders
  runnelctl topic delete orders --cluster DefaultCluster --yes`, func(ctx context.Context, adm *admin.Admin, topic string) error {
		if _, err := adm.TopicRoute(ctx, topic); errors.Is(err, admin.ErrNotFound) {
			return fmt.Errorf("topic %s does not exist (runnelctl topic list --all shows the topics there are)", topic)
		} else if err != nil {
			return err
		}
		if err := a.confirm(yes, fmt.Sprintf("Delete topic %s with its messages and consumer offsets", topic)); err != nil {
			return err
		}
		nodes, err := adm.DeleteTopic(ctx, topic, cluster)
		if err != nil {
			return err
		}
		return printNodes(a, "deleted", nodes)
	})
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "delete only from this cluster's brokers")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func newTopicStatsCmd(a *app) *cobra.Command {
	return newTopicArgCmd(a, "stats", "Show each queue's offsets and last message time", "Show, for every queue of a topic on every broker, the min and max offset (the message count is their difference) and the store time of the newest message.", `  runnelctl topic stats orders
  runnelctl topic stats orders -o json`, func(ctx context.Context, adm *admin.Admin, topic string) error {
		stats, err := adm.TopicStats(ctx, topic)
		if err != nil {
			return err
		}
		if a.output == "json" {
			return writeJSONList(a.stdout, stats)
		}
		t := newTable(a.stdout, "BROKER", "QUEUE", "MIN OFFSET", "MAX OFFSET", "MESSAGES", "LAST UPDATE")
		var total int64
		for _, s := range stats {
			t.row(s.Broker, s.QueueID, s.MinOffset, s.MaxOffset, s.MaxOffset-s.MinOffset, msTime(s.LastUpdate))
			total += s.MaxOffset - s.MinOffset
		}
		t.row("TOTAL", "", "", "", total, "")
		return t.flush()
	})
}

func newTopicPermCmd(a *app) *cobra.Command {
	var cluster, perm string
	var brokers []string
	cmd := &cobra.Command{
		Use:   "update-perm TOPIC --perm RW|R|W",
		Short: "Change only a topic's permission",
		Long: `Change a topic's permission on the brokers that have it, keeping its queue counts
and everything else (mqadmin updateTopicPerm). R stops producers, W stops
consumers; RW restores both.`,
		Example: `  runnelctl topic update-perm orders --perm R
  runnelctl topic update-perm orders --perm RW --broker broker-a`,
		Args:              exactArgs(1, "the topic name"),
		ValidArgsFunction: a.completeTopicArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if perm == "" {
				return fmt.Errorf("update-perm needs --perm")
			}
			p, err := parsePerm(perm)
			if err != nil {
				return err
			}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			writes, err := adm.UpdateTopicPerm(cmd.Context(), args[0], cluster, brokers, p)
			if errors.Is(err, admin.ErrNotFound) {
				return fmt.Errorf("topic %s does not exist on those brokers", args[0])
			}
			if err != nil {
				return err
			}
			return printWrites(a, writes)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&perm, "perm", "p", "", "permission: RW, R, W, or RocketMQ's number (required)")
	f.StringVarP(&cluster, "cluster", "c", "", "only this cluster's masters")
	f.StringSliceVarP(&brokers, "broker", "b", nil, "only these broker groups or host:port addresses")
	return cmd
}

func newTopicConsumersCmd(a *app) *cobra.Command {
	return newTopicArgCmd(a, "consumers", "List the consumer groups of a topic",
		`List the consumer groups that subscribe to a topic or hold offsets on it, on any
of its brokers (QUERY_TOPIC_CONSUME_BY_WHO, as rocketmq-dashboard's "consumer"
tab of a topic).`, `  runnelctl topic consumers orders
  runnelctl topic consumers orders -o json`,
		func(ctx context.Context, adm *admin.Admin, topic string) error {
			groups, err := adm.TopicConsumers(ctx, topic)
			if err != nil {
				return err
			}
			if len(groups) == 0 && a.output != "json" {
				fmt.Fprintf(a.stderr, "note: no consumer group subscribes to %s or has offsets on it\n", topic)
				return nil
			}
			return printNames(a, "GROUP", groups)
		})
}
