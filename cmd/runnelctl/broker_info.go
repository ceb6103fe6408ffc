package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Broker figures and configuration, as each broker reports them.

// brokerTarget is the --broker / --cluster choice of the commands that
// ask or change brokers one by one.
type brokerTarget struct {
	brokers []string
	cluster string
	slaves  bool // with cluster: its slaves too
}

// register adds --broker and --cluster to fs; slaves adds --slaves, for a
// command whose --cluster means the masters by default.
func (t *brokerTarget) register(fs *pflag.FlagSet, slaves bool) {
	fs.StringSliceVarP(&t.brokers, "broker", "b", nil, "broker groups or host:port addresses (default: every broker group's master)")
	fs.StringVarP(&t.cluster, "cluster", "c", "", "every node of this cluster")
	if slaves {
		fs.Lookup("cluster").Usage = "every master of this cluster"
		fs.BoolVar(&t.slaves, "slaves", false, "with --cluster: its slaves too")
	}
}

// nodes resolves the choice; for a command without --slaves, --cluster is
// every node of the cluster (mqadmin brokerStatus -c, getBrokerConfig -c).
func (t *brokerTarget) nodes(ctx context.Context, adm *admin.Admin, all bool) ([]admin.Node, error) {
	switch {
	case t.cluster != "" && len(t.brokers) > 0:
		return nil, fmt.Errorf("--broker and --cluster exclude each other")
	case t.cluster == "":
		if t.slaves {
			return nil, fmt.Errorf("--slaves needs --cluster")
		}
		return adm.BrokerNodes(ctx, t.brokers)
	}
	brokers, err := adm.Brokers(ctx)
	if err != nil {
		return nil, err
	}
	var out []admin.Node
	for _, b := range brokers {
		if b.Cluster == t.cluster && (all || t.slaves || b.IsMaster()) {
			out = append(out, admin.Node{Name: b.Name, Addr: b.Addr})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cluster %s has no broker the name server knows (runnelctl cluster list shows the clusters there are)", t.cluster)
	}
	return out, nil
}

func newBrokerStatusCmd(a *app) *cobra.Command {
	var target brokerTarget
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show brokers' runtime figures",
		Long: `Show each broker's runtime figures (GET_BROKER_RUNTIME_INFO, mqadmin
brokerStatus): version, boot time, commit log offsets, topic count and the
like. Every broker group's master unless --broker or --cluster names others.`,
		Example: `  runnelctl broker status
  runnelctl broker status --cluster DefaultCluster
  runnelctl broker status --broker broker-a -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.perBroker(cmd.Context(), target, (*admin.Admin).BrokerRuntimeInfo)
		},
	}
	target.register(cmd.Flags(), false)
	return cmd
}

func newBrokerConfigCmd(a *app) *cobra.Command {
	var target brokerTarget
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show brokers' configuration in force",
		Long: `Show each broker's configuration in force under RocketMQ's broker.conf key names
(GET_BROKER_CONFIG, mqadmin getBrokerConfig). Every broker group's master
unless --broker or --cluster names others.`,
		Example: `  runnelctl broker config
  runnelctl broker config --broker 127.0.0.1:10911 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.perBroker(cmd.Context(), target, (*admin.Admin).BrokerConfig)
		},
	}
	target.register(cmd.Flags(), false)
	return cmd
}

// brokerTable is one broker's key/value answer in -o json.
type brokerTable struct {
	Broker string            `json:"brokerName"`
	Addr   string            `json:"addr"`
	Values map[string]string `json:"values"`
}

// perBroker prints ask's key/value table of every broker of target.
func (a *app) perBroker(ctx context.Context, target brokerTarget, ask func(*admin.Admin, context.Context, admin.Node) (map[string]string, error)) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	nodes, err := target.nodes(ctx, adm, true)
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
