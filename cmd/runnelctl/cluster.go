package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

func newClusterCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cluster",
		Short:   "Clusters known to the name server",
		Example: `  runnelctl cluster list`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List clusters with their broker groups",
		Long:  "List every cluster the name server knows, with its broker groups and how many masters and slaves they have.",
		Example: `  runnelctl cluster list
  runnelctl cluster list --namesrv 10.0.0.5:9876 -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			brokers, err := adm.Brokers(cmd.Context())
			if err != nil {
				return err
			}
			return printClusters(a, brokers)
		},
	})
	return cmd
}

// clusterRow is one cluster in `cluster list`.
type clusterRow struct {
	Cluster string   `json:"cluster"`
	Brokers []string `json:"brokerNames"`
	Masters int      `json:"masters"`
	Slaves  int      `json:"slaves"`
}

func printClusters(a *app, brokers []admin.Broker) error {
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
	}
	if a.output == "json" {
		if rows == nil {
			rows = []clusterRow{}
		}
		return writeJSON(a.stdout, rows)
	}
	t := newTable(a.stdout, "CLUSTER", "BROKER GROUPS", "MASTERS", "SLAVES")
	for _, r := range rows {
		t.row(r.Cluster, strings.Join(r.Brokers, ","), r.Masters, r.Slaves)
	}
	return t.flush()
}

func newBrokerCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Brokers known to the name server",
		Example: `  runnelctl broker list
  runnelctl broker list --cluster DefaultCluster
  runnelctl broker status
  runnelctl broker config --broker broker-a
  runnelctl broker update-config --broker broker-a maxMessageSize=1048576
  runnelctl broker wipe-write-perm --broker broker-a`,
	}
	var cluster string
	list := &cobra.Command{
		Use:   "list",
		Short: "List every broker node",
		Long:  "List every broker node the name server knows: cluster, broker group name, id (0 = master) and address.",
		Example: `  runnelctl broker list
  runnelctl broker list --cluster DefaultCluster -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			brokers, err := adm.Brokers(cmd.Context())
			if err != nil {
				return err
			}
			if cluster != "" {
				brokers = slices.DeleteFunc(brokers, func(b admin.Broker) bool { return b.Cluster != cluster })
			}
			if a.output == "json" {
				if brokers == nil {
					brokers = []admin.Broker{}
				}
				return writeJSON(a.stdout, brokers)
			}
			t := newTable(a.stdout, "CLUSTER", "BROKER", "ID", "ROLE", "ADDRESS")
			for _, b := range brokers {
				role := "SLAVE"
				if b.IsMaster() {
					role = "MASTER"
				}
				t.row(b.Cluster, b.Name, b.ID, role, b.Addr)
			}
			return t.flush()
		},
	}
	list.Flags().StringVarP(&cluster, "cluster", "c", "", "only brokers of this cluster")
	cmd.AddCommand(list, newBrokerStatusCmd(a), newBrokerConfigCmd(a), newBrokerUpdateConfigCmd(a),
		newBrokerWipeWritePermCmd(a), newBrokerAddWritePermCmd(a))
	return cmd
}
