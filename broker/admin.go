package broker

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleCreateTopic serves UPDATE_AND_CREATE_TOPIC (17) (Java
// AdminBrokerProcessor.updateAndCreateTopic). The new table is registered
// with the name servers before the answer, so a consumer started right
// after finds the route.
func (b *Broker) handleCreateTopic(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.CreateTopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	if remark, ok := checkTopicName(h.Topic); !ok {
		return protocol.NewResponse(req, protocol.RespSystemError, remark)
	}
	if isSystemTopic(h.Topic) || h.Topic == b.cfg.ClusterName || h.Topic == b.cfg.BrokerName {
		return errResponse(req, protocol.RespSystemError, "The topic[%s] is conflict with system topic.", h.Topic)
	}
	if h.ReadQueueNums <= 0 || h.WriteQueueNums <= 0 || h.ReadQueueNums > maxQueueNums || h.WriteQueueNums > maxQueueNums {
		return errResponse(req, protocol.RespInvalidParameter,
			"readQueueNums %d and writeQueueNums %d must be in 1..%d", h.ReadQueueNums, h.WriteQueueNums, maxQueueNums)
	}
	if h.Perm&^(protocol.PermRead|protocol.PermWrite|protocol.PermInherit|protocol.PermPriority) != 0 {
		return errResponse(req, protocol.RespInvalidParameter, "perm %d has unknown bits", h.Perm)
	}
	filter := h.TopicFilterType
	if filter == "" {
		filter = protocol.TopicFilterSingleTag
	}
	tc := protocol.TopicConfig{
		TopicName: h.Topic, ReadQueueNums: int(h.ReadQueueNums), WriteQueueNums: int(h.WriteQueueNums),
		Perm: int(h.Perm), TopicFilterType: filter, TopicSysFlag: int(h.TopicSysFlag), Order: h.Order,
	}
	changed, err := b.topics.put(tc)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	if changed {
		b.log.Info("broker: topic created or updated", "topic", h.Topic, "read", h.ReadQueueNums,
			"write", h.WriteQueueNums, "perm", protocol.PermString(int(h.Perm)), "by", c.RemoteAddr())
		b.registerNow()
	}
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// handleDeleteTopic serves DELETE_TOPIC_IN_BROKER (215): the topic config,
// its queues and the consumer offsets on it go.
func (b *Broker) handleDeleteTopic(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.DeleteTopicRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	if remark, ok := checkTopicName(h.Topic); !ok {
		return protocol.NewResponse(req, protocol.RespSystemError, remark)
	}
	if isSystemTopic(h.Topic) {
		return errResponse(req, protocol.RespSystemError, "The topic[%s] is conflict with system topic.", h.Topic)
	}
	tc, _ := b.topics.get(h.Topic)
	existed, err := b.topics.remove(h.Topic)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	b.offsets.DropTopic(h.Topic)
	// Queues restart at offset 0 if the topic is created again; the
	// long-poll table must not remember the old high-water marks.
	for q := range max(tc.ReadQueueNums, tc.WriteQueueNums) {
		b.holds.Forget(longpoll.Key{Topic: h.Topic, QueueID: int32(q)})
	}
	if existed {
		b.log.Info("broker: topic deleted", "topic", h.Topic, "by", c.RemoteAddr())
		b.registerNow()
	}
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// handleGetAllTopicConfig serves GET_ALL_TOPIC_CONFIG (21).
func (b *Broker) handleGetAllTopicConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table, version := b.topics.snapshot()
	body, err := json.Marshal(protocol.TopicConfigSerializeWrapper{TopicConfigTable: table, DataVersion: version})
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

// handleTopicStats serves GET_TOPIC_STATS_INFO (202): each queue's offset
// range and the store time of its newest message.
func (b *Broker) handleTopicStats(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetTopicStatsInfoRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		return errResponse(req, protocol.RespTopicNotExist, "topic[%s] not exist", h.Topic)
	}
	stats := protocol.TopicStatsTable{OffsetTable: map[protocol.MessageQueue]protocol.TopicOffset{}}
	for q := range int32(tc.WriteQueueNums) {
		min, max := b.st.MinOffset(h.Topic, q), b.st.MaxOffset(h.Topic, q)
		var last int64
		if max > 0 {
			if e, err := b.st.QueueEntry(h.Topic, q, max-1); err == nil {
				last = e.StoreTimestamp
			}
		}
		mq := protocol.MessageQueue{Topic: h.Topic, BrokerName: b.cfg.BrokerName, QueueID: q}
		stats.OffsetTable[mq] = protocol.TopicOffset{MinOffset: min, MaxOffset: max, LastUpdateTimestamp: last}
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = stats.Encode()
	return resp
}

// handleConsumeStats serves GET_CONSUME_STATS (208): per queue, the broker
// offset, the group's committed offset (the lag is their difference) and
// the store time of the last consumed message.
func (b *Broker) handleConsumeStats(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetConsumeStatsRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	topics := []string{h.Topic}
	if h.Topic == "" {
		topics = topicsOfGroup(b.offsets.Group(h.ConsumerGroup, ""))
	}
	stats := protocol.ConsumeStats{OffsetTable: map[protocol.MessageQueue]protocol.OffsetWrapper{}}
	for _, topic := range topics {
		tc, ok := b.topics.get(topic)
		if !ok {
			continue
		}
		for q := range int32(tc.WriteQueueNums) {
			w := protocol.OffsetWrapper{BrokerOffset: b.st.MaxOffset(topic, q)}
			if off, ok := b.offsets.Get(offsets.Key{Group: h.ConsumerGroup, Topic: topic, QueueID: q}); ok {
				w.ConsumerOffset = off
				w.PullOffset = off
			}
			if w.ConsumerOffset > 0 {
				if e, err := b.st.QueueEntry(topic, q, w.ConsumerOffset-1); err == nil {
					w.LastTimestamp = e.StoreTimestamp
				}
			}
			mq := protocol.MessageQueue{Topic: topic, BrokerName: b.cfg.BrokerName, QueueID: q}
			stats.OffsetTable[mq] = w
		}
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = stats.Encode()
	return resp
}

func topicsOfGroup(es []offsets.Entry) []string {
	var out []string
	for _, e := range es {
		if len(out) == 0 || out[len(out)-1] != e.Topic {
			out = append(out, e.Topic)
		}
	}
	return out
}

// bootTime is when the process loaded the broker package, for runtime info.
var bootTime = time.Now()

// handleRuntimeInfo serves GET_BROKER_RUNTIME_INFO (28): a KVTable of the
// figures that are cheap to give.
func (b *Broker) handleRuntimeInfo(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table := map[string]string{
		"brokerVersionDesc":  "Runnel",
		"brokerVersion":      strconv.Itoa(int(protocol.Version)),
		"bootTimestamp":      itoa(bootTime.UnixMilli()),
		"runtime":            time.Since(bootTime).Round(time.Second).String(),
		"commitLogMinOffset": itoa(b.st.MinPhysOffset()),
		"commitLogMaxOffset": itoa(b.st.MaxPhysOffset()),
		"brokerName":         b.cfg.BrokerName,
		"clusterName":        b.cfg.ClusterName,
		"topicCount":         strconv.Itoa(len(b.topics.names())),
		"heldPulls":          strconv.Itoa(b.holds.Len()),
		"goroutines":         strconv.Itoa(runtime.NumGoroutine()),
	}
	body, _ := json.Marshal(map[string]any{"table": table})
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}
