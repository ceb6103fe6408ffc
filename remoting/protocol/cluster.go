package protocol

import (
	"encoding/json"
	"fmt"
)

// ClusterInfo is the body of GET_BROKER_CLUSTER_INFO (RocketMQ ClusterInfo):
// every broker group by name, and the broker names of every cluster.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// MarshalJSON writes nil tables as {}.
func (c ClusterInfo) MarshalJSON() ([]byte, error) {
	type plain ClusterInfo
	p := plain(c)
	if p.BrokerAddrTable == nil {
		p.BrokerAddrTable = map[string]BrokerData{}
	}
	if p.ClusterAddrTable == nil {
		p.ClusterAddrTable = map[string][]string{}
	}
	return json.Marshal(p)
}

// DecodeClusterInfo decodes a cluster info body in standard JSON or with
// fastjson's unquoted integer keys.
func DecodeClusterInfo(body []byte) (*ClusterInfo, error) {
	c := new(ClusterInfo)
	if err := UnmarshalLenient(body, c); err != nil {
		return nil, fmt.Errorf("protocol: cluster info: %w", err)
	}
	return c, nil
}
