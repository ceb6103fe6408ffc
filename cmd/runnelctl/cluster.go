package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

func newClusterCmd(a *app) *cobra.Command {
	cmd := nounCmd("cluster", "Clusters known to the name server", "", `  runnelctl cluster list`)
	var only string
	list := &cobra.Command{
		Use:   "list",
		Short: "List clusters with their broker groups",
		Long: "List every cluster the name server knows, with its broker groups and how many masters and slaves they have, " +
			"then every broker node with its role and, for a replicated group's node, its raft term and applied log index " +
			"(asked of each node; \"-\" when it does not answer).",
		Example: `  runnelctl cluster list
  runnelctl cluster list --cluster DefaultCluster
  runnelctl cluster list --namesrv 10.0.0.5:9876 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, brokers, err := a.brokersOf(cmd.Context(), only)
			if err != nil {
				return err
			}
			if only != "" && len(brokers) == 0 {
				return fmt.Errorf("cluster %s is not known to the name server (runnelctl cluster list shows the clusters there are)", only)
			}
			return printClusters(a, brokers, nodeStates(cmd.Context(), adm, brokers))
		},
	}
	list.Flags().StringVarP(&only, "cluster", "c", "", "only this cluster")
	cmd.AddCommand(list)
	return cmd
}

// brokersOf returns every broker node the name server lists, or only
// cluster's when it is not "", with the admin client that asked.
func (a *app) brokersOf(ctx context.Context, cluster string) (*admin.Admin, []admin.Broker, error) {
	adm, err := a.admin()
	if err != nil {
		return nil, nil, err
	}
	brokers, err := adm.Brokers(ctx)
	if err != nil {
		return nil, nil, err
	}
	if cluster != "" {
		brokers = slices.DeleteFunc(brokers, func(b admin.Broker) bool { return b.Cluster != cluster })
	}
	return adm, brokers, nil
}

// clusterRow is one cluster in `cluster list`.
type clusterRow struct {
	Cluster string        `json:"cluster"`
	Brokers []string      `json:"brokerNames"`
	Masters int           `json:"masters"`
	Slaves  int           `json:"slaves"`
	Nodes   []clusterNode `json:"nodes"`
}

// clusterNode is one broker node in `cluster list`: as the name server
// lists it, with what it says of itself (empty when it did not answer, or
// is not replicated).
type clusterNode struct {
	admin.Broker
	Role    string `json:"role"`
	Term    string `json:"raftTerm,omitempty"`
	Applied string `json:"raftAppliedIndex,omitempty"`
}

// nodeStates asks every node its runtime info, all at once, each within
// the call timeout; a node that fails is left out.
func nodeStates(ctx context.Context, adm *admin.Admin, brokers []admin.Broker) map[string]map[string]string {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]map[string]string{}
	for _, b := range brokers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kv, err := adm.BrokerRuntimeInfo(ctx, admin.Node{Name: b.Name, Addr: b.Addr})
			if err == nil {
				mu.Lock()
				out[b.Addr] = kv
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

func printClusters(a *app, brokers []admin.Broker, states map[string]map[string]string) error {
	var rows []clusterRow
	for _, b := range brokers { // sorted by cluster, name, id
		if len(rows) == 0 || rows[len(rows)-1].Cluster != b.Cluster {
			rows = append(rows, clusterRow{Cluster: b.Cluster, Brokers: []string{}})
		}
		r := &rows[len(rows)-1]
		if !slices.Contains(r.Brokers, b.Name) {
			r.Brokers = append(r.Brokers, b.Name)
		}
		if b.IsMaster() {
			r.Masters++
		} else {
			r.Slaves++
		}
		n := clusterNode{Broker: b, Role: "SLAVE"}
		if b.IsMaster() {
			n.Role = "MASTER"
		}
		if kv := states[b.Addr]; kv != nil {
			n.Term, n.Applied = kv["raftTerm"], kv["raftAppliedIndex"]
		}
		r.Nodes = append(r.Nodes, n)
	}
	if a.output == "json" {
		return writeJSONList(a.stdout, rows)
	}
	t := newTable(a.stdout, "CLUSTER", "BROKER GROUPS", "MASTERS", "SLAVES")
	for _, r := range rows {
		t.row(r.Cluster, strings.Join(r.Brokers, ","), r.Masters, r.Slaves)
	}
	if err := t.flush(); err != nil || len(rows) == 0 {
		return err
	}
	fmt.Fprintln(a.stdout)
	t = newTable(a.stdout, "CLUSTER", "BROKER", "ID", "ROLE", "ADDRESS", "TERM", "APPLIED")
	for _, r := range rows {
		for _, n := range r.Nodes {
			t.row(n.Cluster, n.Name, n.ID, n.Role, n.Addr, dash(n.Term), dash(n.Applied))
		}
	}
	return t.flush()
}

func newBrokerCmd(a *app) *cobra.Command {
	cmd := nounCmd("broker", "Brokers known to the name server", "", `  runnelctl broker list
  runnelctl broker list --cluster DefaultCluster
  runnelctl broker status
  runnelctl broker config --broker broker-a
  runnelctl broker update-config --broker broker-a maxMessageSize=1048576
  runnelctl broker wipe-write-perm --broker broker-a`)
	var cluster string
	list := &cobra.Command{
		Use:   "list",
		Short: "List every broker node",
		Long:  "List every broker node the name server knows: cluster, broker group name, id (0 = master) and address.",
		Example: `  runnelctl broker list
  runnelctl broker list --cluster DefaultCluster -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, brokers, err := a.brokersOf(cmd.Context(), cluster)
			if err != nil {
				return err
			}
			return printList(a, brokers, []string{"CLUSTER", "BROKER", "ID", "ROLE", "ADDRESS"}, func(b admin.Broker) []any {
				role := "SLAVE"
				if b.IsMaster() {
					role = "MASTER"
				}
				return []any{b.Cluster, b.Name, b.ID, role, b.Addr}
			})
		},
	}
	list.Flags().StringVarP(&cluster, "cluster", "c", "", "only brokers of this cluster")
	cmd.AddCommand(list, newBrokerStatusCmd(a), newBrokerConfigCmd(a), newBrokerUpdateConfigCmd(a),
		newBrokerWipeWritePermCmd(a), newBrokerAddWritePermCmd(a))
	return cmd
}
