package remotingdoor

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// handleCreateTopic serves UPDATE_AND_CREATE_TOPIC (17). The new table is
// registered with the name servers before the answer. The attributes
// field changes the topic's attributes in RocketMQ 5's form (mqadmin
// updateTopic -a +message.type=FIFO); without it they stay as they are.
func (d *Door) handleCreateTopic(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.CreateTopicRequestHeader) *protocol.Command {
	tc := protocol.TopicConfig{
		TopicName: h.Topic, ReadQueueNums: int(h.ReadQueueNums), WriteQueueNums: int(h.WriteQueueNums),
		Perm: int(h.Perm), TopicFilterType: h.TopicFilterType, TopicSysFlag: int(h.TopicSysFlag), Order: h.Order,
	}
	cur, _ := d.core.Topic(h.Topic)
	attrs, err := topicconf.AlterAttributes(cur.Attributes, h.Attributes)
	if err != nil {
		return failure(req, core.Refuse(core.InvalidArgument, "%v", err))
	}
	tc.Attributes = attrs
	return outcome(req, d.core.CreateTopic(tc, c.RemoteAddr()))
}

// handleDeleteTopic serves DELETE_TOPIC_IN_BROKER (215).
func (d *Door) handleDeleteTopic(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.DeleteTopicRequestHeader) *protocol.Command {
	return outcome(req, d.core.DeleteTopic(h.Topic, c.RemoteAddr()))
}

// handleGetAllTopicConfig serves GET_ALL_TOPIC_CONFIG (21).
func (d *Door) handleGetAllTopicConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table, version := d.core.Topics()
	return jsonResponse(req, protocol.TopicConfigSerializeWrapper{TopicConfigTable: table, DataVersion: version})
}

// handleTopicStats serves GET_TOPIC_STATS_INFO (202).
func (d *Door) handleTopicStats(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetTopicStatsInfoRequestHeader) *protocol.Command {
	stats, err := d.core.TopicStats(h.Topic)
	if err != nil {
		return failure(req, err)
	}
	table := protocol.TopicStatsTable{OffsetTable: make(map[protocol.MessageQueue]protocol.TopicOffset, len(stats))}
	for _, q := range stats {
		table.OffsetTable[q.Queue] = protocol.TopicOffset{MinOffset: q.MinOffset, MaxOffset: q.MaxOffset, LastUpdateTimestamp: q.LastUpdate}
	}
	return success(req, nil, table.Encode())
}

// handleConsumeStats serves GET_CONSUME_STATS (208).
func (d *Door) handleConsumeStats(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetConsumeStatsRequestHeader) *protocol.Command {
	progress := d.core.ConsumeStats(h.ConsumerGroup, h.Topic)
	stats := protocol.ConsumeStats{OffsetTable: make(map[protocol.MessageQueue]protocol.OffsetWrapper, len(progress))}
	for _, p := range progress {
		// The pull offset is the committed one: the broker keeps no other.
		stats.OffsetTable[p.Queue] = protocol.OffsetWrapper{BrokerOffset: p.BrokerOffset, ConsumerOffset: p.ConsumerOffset,
			PullOffset: p.ConsumerOffset, LastTimestamp: p.LastTimestamp}
	}
	return success(req, nil, stats.Encode())
}

// handleRuntimeInfo serves GET_BROKER_RUNTIME_INFO (28): a KVTable.
func (d *Door) handleRuntimeInfo(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	info := d.core.RuntimeInfo()
	table := map[string]string{
		"brokerVersionDesc":  "Runnel",
		"brokerVersion":      strconv.Itoa(int(protocol.Version)),
		"bootTimestamp":      strconv.FormatInt(info.BootTime.UnixMilli(), 10),
		"runtime":            time.Since(info.BootTime).Round(time.Second).String(),
		"commitLogMinOffset": strconv.FormatInt(info.CommitLogMinOffset, 10),
		"commitLogMaxOffset": strconv.FormatInt(info.CommitLogMaxOffset, 10),
		"brokerName":         info.BrokerName,
		"clusterName":        info.ClusterName,
		"topicCount":         strconv.Itoa(info.Topics),
		"heldPulls":          strconv.Itoa(info.HeldPulls),
		"goroutines":         strconv.Itoa(info.Goroutines),
		// What forced cleaning (disk above diskSpaceCleanForciblyRatio)
		// deleted since the start, and by group what it had not consumed.
		"commitLogForcedCleanMessages":           strconv.FormatInt(info.ForcedCleans.Messages, 10),
		"commitLogForcedCleanUnconsumedMessages": core.GroupCounts(info.ForcedCleans.Unconsumed),
	}
	maps.Copy(table, d.proc.RuntimeInfo())
	return jsonResponse(req, map[string]any{"table": table})
}

// handleGetAllConsumerOffsets serves GET_ALL_CONSUMER_OFFSET (43) (Java
// ConsumerOffsetSerializeWrapper): {"offsetTable":{"topic@group":{"0":12}}}.
func (d *Door) handleGetAllConsumerOffsets(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table := map[string]map[string]int64{}
	for _, e := range d.core.ConsumerOffsets() {
		k := e.Topic + "@" + e.Group
		if table[k] == nil {
			table[k] = map[string]int64{}
		}
		table[k][strconv.Itoa(int(e.QueueID))] = e.Offset
	}
	return jsonResponse(req, map[string]any{"offsetTable": table})
}

// handleTopicConsumeByWho serves QUERY_TOPIC_CONSUME_BY_WHO (300).
func (d *Door) handleTopicConsumeByWho(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic, bad := requiredExt(req, "topic")
	if bad != nil {
		return bad
	}
	return jsonResponse(req, map[string][]string{"groupList": d.core.TopicConsumers(topic)})
}

func connectionsJSON(cs []core.Connection) []protocol.Connection {
	out := make([]protocol.Connection, len(cs))
	for i, c := range cs {
		out[i] = protocol.Connection{ClientID: c.ClientID, ClientAddr: c.ClientAddr, Language: c.Language, Version: c.Version, Protocol: c.Protocol}
	}
	return out
}

// handleConsumerConnections serves GET_CONSUMER_CONNECTION_LIST (203)
// (Java ConsumerConnection, for mqadmin consumerConnection).
func (d *Door) handleConsumerConnections(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	group, bad := requiredExt(req, "consumerGroup")
	if bad != nil {
		return bad
	}
	g, err := d.core.ConsumerConnections(group)
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
func (d *Door) handleProducerConnections(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	group, bad := requiredExt(req, "producerGroup")
	if bad != nil {
		return bad
	}
	cs, err := d.core.ProducerConnections(group)
	if err != nil {
		return failure(req, err)
	}
	return jsonResponse(req, map[string]any{"connectionSet": connectionsJSON(cs)})
}

// handleGetTopicConfig serves GET_TOPIC_CONFIG (351): one topic's config
// (Java 5 TopicConfigAndQueueMapping, without static-topic mapping).
func (d *Door) handleGetTopicConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic := req.Ext("topic")
	tc, ok := d.core.Topic(topic)
	if !ok {
		return errResponse(req, protocol.RespTopicNotExist, "No topic in this broker. topic: %s", topic)
	}
	return jsonResponse(req, tc)
}

// jsonResponse answers req SUCCESS with v as its JSON body.
func jsonResponse(req *protocol.Command, v any) *protocol.Command {
	body, err := json.Marshal(v)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	return success(req, nil, body)
}
