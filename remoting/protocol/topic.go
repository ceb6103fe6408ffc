package protocol

import (
	"encoding/json"

	"github.com/runnelmq/runnel/topicconf"
)

// Permission bits of a topic or queue (RocketMQ PermName); package
// topicconf owns them with the topic config.
const (
	PermPriority = topicconf.PermPriority
	PermRead     = topicconf.PermRead
	PermWrite    = topicconf.PermWrite
	PermInherit  = topicconf.PermInherit
)

// IsReadable, IsWriteable, IsInherited and PermString are topicconf's.
var (
	IsReadable  = topicconf.IsReadable
	IsWriteable = topicconf.IsWriteable
	IsInherited = topicconf.IsInherited
	PermString  = topicconf.PermString
)

// Topic filter types (RocketMQ TopicFilterType).
const (
	TopicFilterSingleTag = topicconf.FilterSingleTag
	TopicFilterMultiTag  = topicconf.FilterMultiTag
)

// TopicConfig is a broker's definition of one topic, as it travels in
// REGISTER_BROKER bodies: the one topic config type, topicconf.Config,
// under its wire name.
type TopicConfig = topicconf.Config

// DataVersion versions a broker's topic table: topicconf's, under its wire
// name.
type DataVersion = topicconf.DataVersion

// TopicConfigSerializeWrapper is a broker's whole topic table with its
// version (RocketMQ TopicConfigSerializeWrapper).
type TopicConfigSerializeWrapper struct {
	TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
	DataVersion      DataVersion            `json:"dataVersion"`
}

// MarshalJSON writes an empty table as {} rather than null.
func (w TopicConfigSerializeWrapper) MarshalJSON() ([]byte, error) {
	type plain TopicConfigSerializeWrapper
	p := plain(w)
	if p.TopicConfigTable == nil {
		p.TopicConfigTable = map[string]TopicConfig{}
	}
	return json.Marshal(p)
}

// TopicList is the body of GET_ALL_TOPIC_LIST_FROM_NAMESERVER and friends
// (RocketMQ TopicList).
type TopicList struct {
	TopicList  []string `json:"topicList"`
	BrokerAddr string   `json:"brokerAddr,omitempty"`
}

// MarshalJSON writes an empty list as [] rather than null.
func (l TopicList) MarshalJSON() ([]byte, error) {
	type plain TopicList
	p := plain(l)
	if p.TopicList == nil {
		p.TopicList = []string{}
	}
	return json.Marshal(p)
}

// DeleteTopicFromNamesrvRequestHeader is the ext of DELETE_TOPIC_IN_NAMESRV.
// ClusterName, when set, limits the deletion to that cluster's brokers
// (RocketMQ 5).
type DeleteTopicFromNamesrvRequestHeader struct {
	Topic       string
	ClusterName string
}

// Decode reads the header from ext; topic is required.
func (h *DeleteTopicFromNamesrvRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("DELETE_TOPIC_IN_NAMESRV", ext)
	h.Topic = d.str("topic", true)
	h.ClusterName = d.str("clusterName", false)
	return d.err
}

// Encode returns the header as extFields.
func (h DeleteTopicFromNamesrvRequestHeader) Encode() map[string]string {
	e := extEncoder{"topic": h.Topic}
	e.optStr("clusterName", h.ClusterName)
	return e
}

// GetTopicsByClusterRequestHeader is the ext of GET_TOPICS_BY_CLUSTER.
type GetTopicsByClusterRequestHeader struct {
	Cluster string
}

// Decode reads the header from ext; cluster is required.
func (h *GetTopicsByClusterRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("GET_TOPICS_BY_CLUSTER", ext)
	h.Cluster = d.str("cluster", true)
	return d.err
}

// Encode returns the header as extFields.
func (h GetTopicsByClusterRequestHeader) Encode() map[string]string {
	return extEncoder{"cluster": h.Cluster}
}
