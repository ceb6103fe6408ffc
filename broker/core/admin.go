package core

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// CreateTopic creates or updates a topic (Java
// AdminBrokerProcessor.updateAndCreateTopic). When it changed, the
// TopicsChanged hook runs and returns before this does, so a consumer
// started after the answer finds the route.
func (c *Core) CreateTopic(tc protocol.TopicConfig, by string) error {
	if remark, ok := checkTopicName(tc.TopicName); !ok {
		return refuse(protocol.RespSystemError, remark)
	}
	if isSystemTopic(tc.TopicName) || tc.TopicName == c.cfg.ClusterName || tc.TopicName == c.cfg.BrokerName {
		return errorf(protocol.RespSystemError, "The topic[%s] is conflict with system topic.", tc.TopicName)
	}
	if tc.ReadQueueNums <= 0 || tc.WriteQueueNums <= 0 || tc.ReadQueueNums > maxQueueNums || tc.WriteQueueNums > maxQueueNums {
		return errorf(protocol.RespInvalidParameter,
			"readQueueNums %d and writeQueueNums %d must be in 1..%d", tc.ReadQueueNums, tc.WriteQueueNums, maxQueueNums)
	}
	if tc.Perm&^(protocol.PermRead|protocol.PermWrite|protocol.PermInherit|protocol.PermPriority) != 0 {
		return errorf(protocol.RespInvalidParameter, "perm %d has unknown bits", tc.Perm)
	}
	withDefaultFilter(&tc)
	changed, err := c.topics.put(tc)
	if err != nil {
		return err
	}
	if changed {
		c.log.Info("broker: topic created or updated", "topic", tc.TopicName, "read", tc.ReadQueueNums,
			"write", tc.WriteQueueNums, "perm", protocol.PermString(tc.Perm), "by", by)
		c.cfg.TopicsChanged(true)
	}
	return nil
}

// DeleteTopic deletes a topic: its config, its queues and the consumer
// offsets on it.
func (c *Core) DeleteTopic(name, by string) error {
	if remark, ok := checkTopicName(name); !ok {
		return refuse(protocol.RespSystemError, remark)
	}
	if isSystemTopic(name) {
		return errorf(protocol.RespSystemError, "The topic[%s] is conflict with system topic.", name)
	}
	tc, _ := c.topics.get(name)
	existed, err := c.topics.remove(name)
	if err != nil {
		return err
	}
	c.offsets.DropTopic(name)
	// Queues restart at offset 0 if the topic is created again; the
	// long-poll table must not remember the old high-water marks.
	for q := range max(tc.ReadQueueNums, tc.WriteQueueNums) {
		c.holds.Forget(longpoll.Key{Topic: name, QueueID: int32(q)})
	}
	if existed {
		c.log.Info("broker: topic deleted", "topic", name, "by", by)
		c.cfg.TopicsChanged(true)
	}
	return nil
}

// Topics returns a copy of the topic table and its version.
func (c *Core) Topics() (map[string]protocol.TopicConfig, protocol.DataVersion) {
	return c.topics.snapshot()
}

// TakeTopicChanges returns the topics created or updated since the last
// call, whether any topic was deleted since then, and the table's version,
// which includes exactly those changes; the changes are then forgotten.
// The broker's registration loop is its one caller: it registers only
// what changed (Java's registerIncrementBrokerData) and the whole table
// after a deletion, which a partial registration cannot express.
func (c *Core) TakeTopicChanges() (changed map[string]protocol.TopicConfig, removed bool, version protocol.DataVersion) {
	return c.topics.takeChanges()
}

// Topic returns one topic's config.
func (c *Core) Topic(name string) (protocol.TopicConfig, bool) { return c.topics.get(name) }

// TopicStats returns each queue's offset range and the store time of its
// newest message.
func (c *Core) TopicStats(topic string) (protocol.TopicStatsTable, error) {
	tc, ok := c.topics.get(topic)
	if !ok {
		return protocol.TopicStatsTable{}, errorf(protocol.RespTopicNotExist, "topic[%s] not exist", topic)
	}
	stats := protocol.TopicStatsTable{OffsetTable: map[protocol.MessageQueue]protocol.TopicOffset{}}
	for q := range int32(tc.WriteQueueNums) {
		lo, hi := c.store().MinOffset(topic, q), c.store().MaxOffset(topic, q)
		var last int64
		if hi > 0 {
			if e, err := c.store().QueueEntry(topic, q, hi-1); err == nil {
				last = e.StoreTimestamp
			}
		}
		mq := protocol.MessageQueue{Topic: topic, BrokerName: c.cfg.BrokerName, QueueID: q}
		stats.OffsetTable[mq] = protocol.TopicOffset{MinOffset: lo, MaxOffset: hi, LastUpdateTimestamp: last}
	}
	return stats, nil
}

// ConsumeStats returns, per queue of topic (every topic the group holds
// offsets on when topic is ""), the broker offset, the group's committed
// offset (the lag is their difference) and the store time of the last
// consumed message.
func (c *Core) ConsumeStats(group, topic string) protocol.ConsumeStats {
	topics := []string{topic}
	if topic == "" {
		topics = topicsOfGroup(c.offsets.Group(group, ""))
	}
	stats := protocol.ConsumeStats{OffsetTable: map[protocol.MessageQueue]protocol.OffsetWrapper{}}
	for _, t := range topics {
		tc, ok := c.topics.get(t)
		if !ok {
			continue
		}
		for q := range int32(tc.WriteQueueNums) {
			w := protocol.OffsetWrapper{BrokerOffset: c.store().MaxOffset(t, q)}
			if off, ok := c.offsets.Get(offsets.Key{Group: group, Topic: t, QueueID: q}); ok {
				w.ConsumerOffset = off
				w.PullOffset = off
			}
			if w.ConsumerOffset > 0 {
				if e, err := c.store().QueueEntry(t, q, w.ConsumerOffset-1); err == nil {
					w.LastTimestamp = e.StoreTimestamp
				}
			}
			mq := protocol.MessageQueue{Topic: t, BrokerName: c.cfg.BrokerName, QueueID: q}
			stats.OffsetTable[mq] = w
		}
	}
	return stats
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

// bootTime is when the process loaded the core, for runtime info.
var bootTime = time.Now()

// RuntimeInfo returns the runtime figures that are cheap to give, under
// RocketMQ's KVTable keys where one exists.
func (c *Core) RuntimeInfo() map[string]string {
	return map[string]string{
		"brokerVersionDesc":  "Runnel",
		"brokerVersion":      strconv.Itoa(int(protocol.Version)),
		"bootTimestamp":      strconv.FormatInt(bootTime.UnixMilli(), 10),
		"runtime":            time.Since(bootTime).Round(time.Second).String(),
		"commitLogMinOffset": strconv.FormatInt(c.store().MinPhysOffset(), 10),
		"commitLogMaxOffset": strconv.FormatInt(c.store().MaxPhysOffset(), 10),
		"brokerName":         c.cfg.BrokerName,
		"clusterName":        c.cfg.ClusterName,
		"topicCount":         strconv.Itoa(len(c.topics.names())),
		"heldPulls":          strconv.Itoa(c.holds.Len()),
		"goroutines":         strconv.Itoa(runtime.NumGoroutine()),
	}
}

// KnownGroups returns the consumer groups with a live member or a
// committed offset, sorted (GroupConfigs adds the configured ones).
func (c *Core) KnownGroups() []string {
	set := map[string]bool{}
	for _, g := range c.clients.Groups() {
		set[g] = true
	}
	for _, e := range c.offsets.All() {
		set[e.Group] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// ConsumerOffsets returns every committed consumer offset, sorted by
// group, topic and queue.
func (c *Core) ConsumerOffsets() []offsets.Entry { return c.offsets.All() }

// TopicConsumers returns the groups subscribed to, or holding offsets on,
// a topic, sorted.
func (c *Core) TopicConsumers(topic string) []string {
	set := map[string]bool{}
	for _, g := range c.clients.GroupsOfTopic(topic) {
		set[g] = true
	}
	for _, g := range c.offsets.GroupsOfTopic(topic) {
		set[g] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// Connection is one client connection, for tools.
type Connection struct {
	ClientID, ClientAddr, Language string
	Version                        int
}

func connectionsOf(chans []clients.Channel) []Connection {
	out := make([]Connection, 0, len(chans))
	for _, ch := range chans {
		conn := Connection{ClientID: ch.ClientID, Language: ch.Language, Version: ch.Version}
		if c, ok := channelOf(ch); ok {
			conn.ClientAddr = c.RemoteAddr()
		}
		out = append(out, conn)
	}
	return out
}

// ConsumerGroupInfo is an online consumer group, for tools (Java
// ConsumerConnection).
type ConsumerGroupInfo struct {
	Connections      []Connection
	Subscriptions    []clients.Subscription
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
}

// ConsumerConnections describes an online consumer group; a group with no
// live member is CONSUMER_NOT_ONLINE.
func (c *Core) ConsumerConnections(group string) (ConsumerGroupInfo, error) {
	g, ok := c.clients.Group(group)
	if !ok || len(g.Channels) == 0 {
		return ConsumerGroupInfo{}, errorf(protocol.RespConsumerNotOnline, "the consumer group[%s] not online", group)
	}
	return ConsumerGroupInfo{
		Connections:   connectionsOf(g.Channels),
		Subscriptions: g.Subscriptions,
		ConsumeType:   g.ConsumeType, MessageModel: g.MessageModel, ConsumeFromWhere: g.ConsumeFromWhere,
	}, nil
}

// ProducerConnections lists a producer group's connections.
func (c *Core) ProducerConnections(group string) ([]Connection, error) {
	chans := c.clients.ProducerChannels(group)
	if len(chans) == 0 {
		return nil, errorf(protocol.RespSystemError, "the producer group[%s] not exist", group)
	}
	return connectionsOf(chans), nil
}
