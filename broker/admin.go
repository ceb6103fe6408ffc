package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleCreateTopic serves UPDATE_AND_CREATE_TOPIC (17). The new table is
// registered with the name servers before the answer.
func (b *Broker) handleCreateTopic(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.CreateTopicRequestHeader) *protocol.Command {
	tc := protocol.TopicConfig{
		TopicName: h.Topic, ReadQueueNums: int(h.ReadQueueNums), WriteQueueNums: int(h.WriteQueueNums),
		Perm: int(h.Perm), TopicFilterType: h.TopicFilterType, TopicSysFlag: int(h.TopicSysFlag), Order: h.Order,
	}
	return outcome(req, b.core.CreateTopic(tc, c.RemoteAddr()))
}

// handleDeleteTopic serves DELETE_TOPIC_IN_BROKER (215).
func (b *Broker) handleDeleteTopic(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.DeleteTopicRequestHeader) *protocol.Command {
	return outcome(req, b.core.DeleteTopic(h.Topic, c.RemoteAddr()))
}

// handleGetAllTopicConfig serves GET_ALL_TOPIC_CONFIG (21).
func (b *Broker) handleGetAllTopicConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table, version := b.core.Topics()
	return jsonResponse(req, protocol.TopicConfigSerializeWrapper{TopicConfigTable: table, DataVersion: version})
}

// handleTopicStats serves GET_TOPIC_STATS_INFO (202).
func (b *Broker) handleTopicStats(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetTopicStatsInfoRequestHeader) *protocol.Command {
	stats, err := b.core.TopicStats(h.Topic)
	if err != nil {
		return failure(req, err)
	}
	return success(req, nil, stats.Encode())
}

// handleConsumeStats serves GET_CONSUME_STATS (208).
func (b *Broker) handleConsumeStats(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetConsumeStatsRequestHeader) *protocol.Command {
	return success(req, nil, b.core.ConsumeStats(h.ConsumerGroup, h.Topic).Encode())
}

// handleRuntimeInfo serves GET_BROKER_RUNTIME_INFO (28): a KVTable.
func (b *Broker) handleRuntimeInfo(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table := b.core.RuntimeInfo()
	b.replicaRuntimeInfo(table)
	return jsonResponse(req, map[string]any{"table": table})
}

// handleGetAllConsumerOffsets serves GET_ALL_CONSUMER_OFFSET (43) (Java
// ConsumerOffsetSerializeWrapper): {"offsetTable":{"topic@group":{"0":12}}}.
func (b *Broker) handleGetAllConsumerOffsets(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table := map[string]map[string]int64{}
	for _, e := range b.core.ConsumerOffsets() {
		k := e.Topic + "@" + e.Group
		if table[k] == nil {
			table[k] = map[string]int64{}
		}
		table[k][strconv.Itoa(int(e.QueueID))] = e.Offset
	}
	return jsonResponse(req, map[string]any{"offsetTable": table})
}

// handleTopicConsumeByWho serves QUERY_TOPIC_CONSUME_BY_WHO (300).
func (b *Broker) handleTopicConsumeByWho(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic := req.Ext("topic")
	if topic == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: QUERY_TOPIC_CONSUME_BY_WHO header: topic: missing")
	}
	return jsonResponse(req, map[string][]string{"groupList": b.core.TopicConsumers(topic)})
}

// connection is one client connection in RocketMQ's Connection JSON.
type connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int    `json:"version"`
}

func connectionsJSON(cs []core.Connection) []connection {
	out := make([]connection, len(cs))
	for i, c := range cs {
		out[i] = connection{ClientID: c.ClientID, ClientAddr: c.ClientAddr, Language: c.Language, Version: c.Version}
	}
	return out
}

// handleConsumerConnections serves GET_CONSUMER_CONNECTION_LIST (203)
// (Java ConsumerConnection, for mqadmin consumerConnection).
func (b *Broker) handleConsumerConnections(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	group := req.Ext("consumerGroup")
	if group == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: GET_CONSUMER_CONNECTION_LIST header: consumerGroup: missing")
	}
	g, err := b.core.ConsumerConnections(group)
	if err != nil {
		return failure(req, err)
	}
	subs := map[string]protocol.SubscriptionData{}
	for _, s := range g.Subscriptions {
		sd := protocol.SubscriptionData{Topic: s.Topic, SubString: s.Expression, TagsSet: s.Tags,
			CodeSet: s.Codes, SubVersion: s.Version, ExpressionType: s.ExpressionType}
		if sd.TagsSet == nil {
			sd.TagsSet = []string{}
		}
		if sd.CodeSet == nil {
			sd.CodeSet = protocol.CodeSet{}
		}
		subs[s.Topic] = sd
	}
	return jsonResponse(req, map[string]any{
		"connectionSet":     connectionsJSON(g.Connections),
		"subscriptionTable": subs,
		"consumeType":       g.ConsumeType,
		"messageModel":      g.MessageModel,
		"consumeFromWhere":  g.ConsumeFromWhere,
	})
}

// handleProducerConnections serves GET_PRODUCER_CONNECTION_LIST (204).
func (b *Broker) handleProducerConnections(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	group := req.Ext("producerGroup")
	if group == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: GET_PRODUCER_CONNECTION_LIST header: producerGroup: missing")
	}
	cs, err := b.core.ProducerConnections(group)
	if err != nil {
		return failure(req, err)
	}
	return jsonResponse(req, map[string]any{"connectionSet": connectionsJSON(cs)})
}

// handleGetTopicConfig serves GET_TOPIC_CONFIG (351): one topic's config
// (Java 5 TopicConfigAndQueueMapping, without static-topic mapping).
func (b *Broker) handleGetTopicConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic := req.Ext("topic")
	tc, ok := b.core.Topic(topic)
	if !ok {
		return errResponse(req, protocol.RespTopicNotExist, "No topic in this broker. topic: %s", topic)
	}
	return jsonResponse(req, tc)
}

// handleGetBrokerConfig serves GET_BROKER_CONFIG (26): the configuration in
// force as RocketMQ properties text, under RocketMQ's key names.
func (b *Broker) handleGetBrokerConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	c := b.Config()
	props := map[string]string{
		"brokerPermission":      strconv.Itoa(c.BrokerPermission),
		"timerMaxDelaySec":      formatSeconds(c.TimerMaxDelay),
		"brokerName":            c.BrokerName,
		"brokerClusterName":     c.ClusterName,
		"brokerId":              strconv.FormatInt(c.BrokerID, 10),
		"namesrvAddr":           strings.Join(c.NamesrvAddrs, ";"),
		"listenPort":            portOf(b.Addr()),
		"brokerIP1":             hostOf(b.AdvertisedAddr()),
		"storePathRootDir":      c.StoreDir,
		"flushDiskType":         c.FlushMode.String(),
		"autoCreateTopicEnable": fmt.Sprint(c.AutoCreateTopicEnable),
		"defaultTopicQueueNums": fmt.Sprint(c.DefaultTopicQueueNums),
		"fileReservedTime":      fmt.Sprint(int(c.FileReservedTime.Hours())),
		"maxMessageSize":        fmt.Sprint(c.MaxMessageSize),
	}
	return success(req, nil, []byte(protocol.FormatProperties(props)))
}

// jsonResponse answers req SUCCESS with v as its JSON body.
func jsonResponse(req *protocol.Command, v any) *protocol.Command {
	body, err := json.Marshal(v)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	return success(req, nil, body)
}

func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}
