package routeinfo

import (
	"maps"
	"slices"
	"sort"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TopicRoute assembles the route of topic: one QueueData per broker group
// serving it and those groups' addresses, both sorted by broker name so the
// same table always yields the same body. It reports false when the topic
// has no queue data or none of its groups has an address (the name server
// then answers TOPIC_NOT_EXIST).
func (t *Table) TopicRoute(topic string) (*protocol.TopicRouteData, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	qs := t.mu.topics[topic]
	if len(qs) == 0 {
		return nil, false
	}
	r := &protocol.TopicRouteData{
		QueueDatas:        make([]protocol.QueueData, 0, len(qs)),
		BrokerDatas:       make([]protocol.BrokerData, 0, len(qs)),
		FilterServerTable: map[string][]string{},
	}
	// qs is in broker name order, so both lists are too.
	for _, qd := range qs {
		r.QueueDatas = append(r.QueueDatas, qd)
		if g := t.mu.groups[qd.BrokerName]; g != nil {
			r.BrokerDatas = append(r.BrokerDatas, g.data())
		}
	}
	if len(r.BrokerDatas) == 0 {
		return nil, false
	}
	return r, true
}

func (g *brokerGroup) data() protocol.BrokerData {
	bd := protocol.BrokerData{Cluster: g.cluster, BrokerName: g.name, BrokerAddrs: make(map[int64]string, len(g.addrs))}
	for id, addr := range g.addrs {
		bd.BrokerAddrs[id] = addr
	}
	return bd
}

// ClusterInfo returns a copy of every group and every cluster's broker
// names (sorted).
func (t *Table) ClusterInfo() protocol.ClusterInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ci := protocol.ClusterInfo{
		BrokerAddrTable:  make(map[string]protocol.BrokerData, len(t.mu.groups)),
		ClusterAddrTable: make(map[string][]string, len(t.mu.clusters)),
	}
	for name, g := range t.mu.groups {
		ci.BrokerAddrTable[name] = g.data()
	}
	for c, names := range t.mu.clusters {
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		ci.ClusterAddrTable[c] = list
	}
	return ci
}

// Topics returns every topic with a route entry, sorted.
func (t *Table) Topics() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.mu.topics)) // nil for none: TopicList writes it as []
}

// DeleteTopic removes topic's queue data: all of it when clusterName is
// empty, else only that of the cluster's broker groups. It reports whether
// anything was removed.
func (t *Table) DeleteTopic(topic, clusterName string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	qs := t.mu.topics[topic]
	if qs == nil {
		return false
	}
	if clusterName == "" {
		delete(t.mu.topics, topic)
		return true
	}
	removed := false
	for name := range t.mu.clusters[clusterName] {
		var ok bool
		if qs, ok = qs.del(name); ok {
			removed = true
		}
	}
	t.setQueuesLocked(topic, qs)
	return removed
}

// DataVersion returns the topic table version a live broker last
// registered, and whether the broker is live.
func (t *Table) DataVersion(brokerAddr string) (protocol.DataVersion, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	lb := t.mu.live[brokerAddr]
	if lb == nil {
		return protocol.DataVersion{}, false
	}
	return lb.dataVersion, true
}

// LiveBrokers returns every live broker, sorted by address.
func (t *Table) LiveBrokers() []Broker {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Broker, 0, len(t.mu.live))
	for _, lb := range t.mu.live {
		out = append(out, lb.Broker)
	}
	sortBrokers(out)
	return out
}

// QueryDataVersion compares a broker's topic table version with the one
// it last registered (QUERY_DATA_VERSION). It reports changed when they
// differ or the broker is unknown; when unchanged the query counts as a
// heartbeat, as in RocketMQ. current is the registered version, valid when
// known.
func (t *Table) QueryDataVersion(brokerAddr string, v protocol.DataVersion) (changed bool, current protocol.DataVersion, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lb := t.mu.live[brokerAddr]
	if lb == nil {
		return true, protocol.DataVersion{}, false
	}
	if lb.dataVersion != v {
		return true, lb.dataVersion, true
	}
	lb.lastUpdate = t.cfg.Now()
	return false, lb.dataVersion, true
}

// TopicsOfCluster returns the topics served by any broker group of
// clusterName, sorted (GET_TOPICS_BY_CLUSTER).
func (t *Table) TopicsOfCluster(clusterName string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := t.mu.clusters[clusterName]
	out := []string{}
	for topic, qs := range t.mu.topics {
		for _, qd := range qs {
			if _, ok := names[qd.BrokerName]; ok {
				out = append(out, topic)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
