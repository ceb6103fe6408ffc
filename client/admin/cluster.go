package admin

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// ClusterInfo asks a name server for every cluster and broker group
// (GET_BROKER_CLUSTER_INFO).
func (a *Admin) ClusterInfo(ctx context.Context) (*protocol.ClusterInfo, error) {
	const op = "cluster info"
	return namesrvBody(ctx, a, op, protocol.NewRequest(protocol.ReqGetBrokerClusterInfo, nil, nil), protocol.DecodeClusterInfo)
}

// Broker is one broker node as the name server knows it.
type Broker struct {
	Cluster string `json:"cluster"`
	Name    string `json:"brokerName"`
	ID      int64  `json:"brokerId"` // 0 is the master
	Addr    string `json:"addr"`
}

// IsMaster reports whether b is its group's master.
func (b Broker) IsMaster() bool { return b.ID == protocol.MasterID }

// Brokers lists every broker node, sorted by cluster, name and id. A broker
// group that is in no cluster's list is reported with its own cluster
// field.
func (a *Admin) Brokers(ctx context.Context) ([]Broker, error) {
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	return brokersOf(info), nil
}

func brokersOf(info *protocol.ClusterInfo) []Broker {
	clusterOf := make(map[string]string)
	for cluster, names := range info.ClusterAddrTable {
		for _, n := range names {
			clusterOf[n] = cluster
		}
	}
	var out []Broker
	for name, bd := range info.BrokerAddrTable {
		cluster := clusterOf[name]
		if cluster == "" {
			cluster = bd.Cluster
		}
		if bd.BrokerName != "" {
			name = bd.BrokerName
		}
		for id, addr := range bd.BrokerAddrs {
			out = append(out, Broker{Cluster: cluster, Name: name, ID: id, Addr: addr})
		}
	}
	slices.SortFunc(out, func(x, y Broker) int {
		return cmp.Or(cmp.Compare(x.Cluster, y.Cluster), cmp.Compare(x.Name, y.Name), cmp.Compare(x.ID, y.ID))
	})
	return out
}

// masterRefs returns the master of every broker group of cluster (every
// cluster when cluster is ""), sorted by name. A group without a master is
// an error: writes must not silently skip it.
func masterRefs(info *protocol.ClusterInfo, cluster string) ([]Node, error) {
	var names []string
	if cluster == "" {
		for name := range info.BrokerAddrTable {
			names = append(names, name)
		}
	} else {
		var ok bool
		names, ok = info.ClusterAddrTable[cluster]
		if !ok {
			known := make([]string, 0, len(info.ClusterAddrTable))
			for c := range info.ClusterAddrTable {
				known = append(known, c)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("%w: cluster %q is unknown (known: %s)", ErrNoBroker, cluster, strings.Join(known, ", "))
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]Node, 0, len(names))
	for _, name := range names {
		bd, ok := info.BrokerAddrTable[name]
		if !ok || bd.MasterAddr() == "" {
			return nil, fmt.Errorf("%w: broker group %q has no master", ErrNoBroker, name)
		}
		out = append(out, Node{Name: name, Addr: bd.MasterAddr()})
	}
	if len(out) == 0 {
		if cluster == "" {
			return nil, fmt.Errorf("%w: the name server knows no broker", ErrNoBroker)
		}
		return nil, fmt.Errorf("%w: cluster %q has no broker", ErrNoBroker, cluster)
	}
	return out, nil
}

// resolveBrokers turns broker names or host:port addresses into the
// masters to write to. A name must be a known broker group; an address is
// taken as given (it may be a broker the name server does not list yet).
func resolveBrokers(info *protocol.ClusterInfo, brokers []string) ([]Node, error) {
	var out []Node
	for _, b := range brokers {
		if bd, ok := info.BrokerAddrTable[b]; ok {
			if bd.MasterAddr() == "" {
				return nil, fmt.Errorf("%w: broker group %q has no master", ErrNoBroker, b)
			}
			out = append(out, Node{Name: b, Addr: bd.MasterAddr()})
			continue
		}
		if _, _, err := net.SplitHostPort(b); err == nil {
			out = append(out, Node{Name: nameOfAddr(info, b), Addr: b})
			continue
		}
		return nil, fmt.Errorf("%w: %q is neither a known broker name nor host:port", ErrNoBroker, b)
	}
	return out, nil
}

// nameOfAddr returns the broker group that has addr, or "".
func nameOfAddr(info *protocol.ClusterInfo, addr string) string {
	for name, bd := range info.BrokerAddrTable {
		for _, a := range bd.BrokerAddrs {
			if a == addr {
				return name
			}
		}
	}
	return ""
}

// routeRefs returns, for every broker group in a topic route, the node to
// ask: the master, or the lowest-id slave when the master is gone (reads
// still work there). Sorted by name.
func routeRefs(route *protocol.TopicRouteData) []Node {
	var out []Node
	for _, bd := range route.BrokerDatas {
		if addr := readAddr(bd); addr != "" {
			out = append(out, Node{Name: bd.BrokerName, Addr: addr})
		}
	}
	slices.SortFunc(out, func(x, y Node) int { return cmp.Compare(x.Name, y.Name) })
	return slices.CompactFunc(out, func(x, y Node) bool { return x.Name == y.Name })
}

func readAddr(bd protocol.BrokerData) string {
	if addr := bd.MasterAddr(); addr != "" {
		return addr
	}
	ids := make([]int64, 0, len(bd.BrokerAddrs))
	for id := range bd.BrokerAddrs {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return ""
	}
	return bd.BrokerAddrs[slices.Min(ids)]
}
