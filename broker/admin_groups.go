package broker

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// subscriptionGroupConfig is RocketMQ's SubscriptionGroupConfig with the
// defaults every group has here (groups are not configured separately:
// a group exists once it sent a heartbeat or committed an offset).
type subscriptionGroupConfig struct {
	GroupName                      string `json:"groupName"`
	ConsumeEnable                  bool   `json:"consumeEnable"`
	ConsumeFromMinEnable           bool   `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool   `json:"consumeBroadcastEnable"`
	RetryQueueNums                 int    `json:"retryQueueNums"`
	RetryMaxTimes                  int    `json:"retryMaxTimes"`
	BrokerID                       int64  `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64  `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool   `json:"notifyConsumerIdsChangedEnable"`
}

// knownGroups returns the consumer groups with a live member or a
// committed offset, sorted.
func (b *Broker) knownGroups() []string {
	set := map[string]bool{}
	for _, g := range b.clients.Groups() {
		set[g] = true
	}
	for _, e := range b.offsets.All() {
		set[e.Group] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// handleGetAllSubscriptionGroups serves GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201) (Java SubscriptionGroupWrapper).
func (b *Broker) handleGetAllSubscriptionGroups(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table := map[string]subscriptionGroupConfig{}
	for _, g := range b.knownGroups() {
		table[g] = subscriptionGroupConfig{
			GroupName: g, ConsumeEnable: true, ConsumeFromMinEnable: true, ConsumeBroadcastEnable: true,
			RetryQueueNums: retryQueueNums, RetryMaxTimes: 16, WhichBrokerWhenConsumeSlowly: 1,
			NotifyConsumerIdsChangedEnable: true,
		}
	}
	_, version := b.topics.snapshot()
	body, err := json.Marshal(map[string]any{"subscriptionGroupTable": table, "dataVersion": version})
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

// handleGetAllConsumerOffsets serves GET_ALL_CONSUMER_OFFSET (43) (Java
// ConsumerOffsetSerializeWrapper): {"offsetTable":{"topic@group":{"0":12}}}.
func (b *Broker) handleGetAllConsumerOffsets(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table := map[string]map[string]int64{}
	for _, e := range b.offsets.All() {
		k := e.Topic + "@" + e.Group
		if table[k] == nil {
			table[k] = map[string]int64{}
		}
		table[k][strconv.Itoa(int(e.QueueID))] = e.Offset
	}
	body, err := json.Marshal(map[string]any{"offsetTable": table})
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}

// handleTopicConsumeByWho serves QUERY_TOPIC_CONSUME_BY_WHO (300): the
// groups subscribed to, or holding offsets on, a topic ({"groupList":[]}).
func (b *Broker) handleTopicConsumeByWho(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic := req.Ext("topic")
	if topic == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: QUERY_TOPIC_CONSUME_BY_WHO header: topic: missing")
	}
	set := map[string]bool{}
	for _, g := range b.clients.GroupsOfTopic(topic) {
		set[g] = true
	}
	for _, g := range b.offsets.GroupsOfTopic(topic) {
		set[g] = true
	}
	body, _ := json.Marshal(map[string][]string{"groupList": slices.Sorted(maps.Keys(set))})
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}
