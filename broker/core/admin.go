package core

import (
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// CreateTopic creates or updates a topic (Java
// AdminBrokerProcessor.updateAndCreateTopic) with the attributes
// tc.Attributes holds, which must be ones Runnel knows (message.type;
// topicconf.AlterAttributes applies mqadmin's changes). When it changed, the
// TopicsChanged hook runs and returns before this does, so a consumer
// started after the answer finds the route.
func (c *Core) CreateTopic(tc topicconf.Config, by string) error {
	if remark, ok := checkTopicName(tc.TopicName); !ok {
		return refuse(InvalidName, remark)
	}
	if isSystemTopic(tc.TopicName) || tc.TopicName == c.cfg.ClusterName || tc.TopicName == c.cfg.BrokerName {
		return errorf(ReservedName, "The topic[%s] is conflict with system topic.", tc.TopicName)
	}
	if tc.ReadQueueNums <= 0 || tc.WriteQueueNums <= 0 || tc.ReadQueueNums > maxQueueNums || tc.WriteQueueNums > maxQueueNums {
		return errorf(InvalidArgument,
			"readQueueNums %d and writeQueueNums %d must be in 1..%d", tc.ReadQueueNums, tc.WriteQueueNums, maxQueueNums)
	}
	if tc.Perm&^(topicconf.PermRead|topicconf.PermWrite|topicconf.PermInherit|topicconf.PermPriority) != 0 {
		return errorf(InvalidArgument, "perm %d has unknown bits", tc.Perm)
	}
	if err := topicconf.ValidateAttributes(tc.Attributes); err != nil {
		return refuse(InvalidArgument, err.Error())
	}
	withDefaultFilter(&tc)
	changed, err := c.topics.put(tc)
	if err != nil {
		return err
	}
	if changed {
		c.log.Info("broker: topic created or updated", "topic", tc.TopicName, "read", tc.ReadQueueNums,
			"write", tc.WriteQueueNums, "perm", topicconf.PermString(tc.Perm), "type", tc.MessageType(), "by", by)
		c.cfg.TopicsChanged(true)
	}
	return nil
}

// DeleteTopic deletes a topic: its config, its queues and the consumer
// offsets on it.
func (c *Core) DeleteTopic(name, by string) error {
	if remark, ok := checkTopicName(name); !ok {
		return refuse(InvalidName, remark)
	}
	if isSystemTopic(name) {
		return errorf(ReservedName, "The topic[%s] is conflict with system topic.", name)
	}
	tc, _ := c.topics.get(name)
	existed, err := c.topics.remove(name)
	if err != nil {
		return err
	}
	c.offsets.DropTopic(name)
	c.inflight.DropTopic(name) // the store's op deleted their records
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
func (c *Core) Topics() (map[string]topicconf.Config, topicconf.DataVersion) {
	return c.topics.snapshot()
}

// TakeTopicChanges returns the topics created or updated since the last
// call, whether any topic was deleted since then, and the table's version,
// which includes exactly those changes; the changes are then forgotten.
// The broker's registration loop is its one caller: it registers only
// what changed (Java's registerIncrementBrokerData) and the whole table
// after a deletion, which a partial registration cannot express.
func (c *Core) TakeTopicChanges() (changed map[string]topicconf.Config, removed bool, version topicconf.DataVersion) {
	return c.topics.takeChanges()
}

// Topic returns one topic's config.
func (c *Core) Topic(name string) (topicconf.Config, bool) { return c.topics.get(name) }

// QueueStats is one queue's offset range and the store time of its newest
// message (epoch ms; 0 when empty).
type QueueStats struct {
	Queue                message.Queue
	MinOffset, MaxOffset int64
	LastUpdate           int64
}

// TopicStats returns each of a topic's queues' stats, in queue order.
func (c *Core) TopicStats(topic string) ([]QueueStats, error) {
	tc, ok := c.topics.get(topic)
	if !ok {
		return nil, errorf(TopicNotFound, "topic[%s] not exist", topic)
	}
	stats := make([]QueueStats, 0, tc.WriteQueueNums)
	for q := range int32(tc.WriteQueueNums) {
		lo, hi := c.store().MinOffset(topic, q), c.store().MaxOffset(topic, q)
		var last int64
		if hi > 0 {
			if e, err := c.store().QueueEntry(topic, q, hi-1); err == nil {
				last = e.StoreTimestamp
			}
		}
		mq := message.Queue{Topic: topic, BrokerName: c.cfg.BrokerName, QueueID: q}
		stats = append(stats, QueueStats{Queue: mq, MinOffset: lo, MaxOffset: hi, LastUpdate: last})
	}
	return stats, nil
}

// QueueProgress is a consumer group's progress on one queue: the queue's
// max offset, the group's committed offset (the lag is their difference;
// 0 when it committed none) and the store time of the last message it
// consumed (epoch ms; 0 when none). A POP consumer's offset moves as it
// pops (a FIFO group's as it acknowledges); InFlight is how many of the
// queue's messages it popped and has not acknowledged yet.
type QueueProgress struct {
	Queue                        message.Queue
	BrokerOffset, ConsumerOffset int64
	LastTimestamp                int64
	InFlight                     int
}

// ConsumeStats returns a group's progress on each queue of topic (of
// every topic the group holds offsets on when topic is ""), by topic and
// queue.
func (c *Core) ConsumeStats(group, topic string) []QueueProgress {
	topics := []string{topic}
	if topic == "" {
		topics = topicsOfGroup(c.offsets.Group(group, ""))
	}
	var stats []QueueProgress
	for _, t := range topics {
		tc, ok := c.topics.get(t)
		if !ok {
			continue
		}
		for q := range int32(tc.WriteQueueNums) {
			p := QueueProgress{
				Queue:        message.Queue{Topic: t, BrokerName: c.cfg.BrokerName, QueueID: q},
				BrokerOffset: c.store().MaxOffset(t, q),
				InFlight:     c.inflight.CountQueue(pop.QueueKey{Group: group, Topic: t, QueueID: q}),
			}
			if off, ok := c.offsets.Get(offsets.Key{Group: group, Topic: t, QueueID: q}); ok {
				p.ConsumerOffset = off
			}
			if p.ConsumerOffset > 0 {
				if e, err := c.store().QueueEntry(t, q, p.ConsumerOffset-1); err == nil {
					p.LastTimestamp = e.StoreTimestamp
				}
			}
			stats = append(stats, p)
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

// RuntimeInfo is what the core tells of itself at run time.
type RuntimeInfo struct {
	// BootTime is when the process loaded the core.
	BootTime                               time.Time
	BrokerName, ClusterName                string
	CommitLogMinOffset, CommitLogMaxOffset int64
	Topics, HeldPulls, Goroutines          int
	// ForcedCleans is what forced cleaning deleted since the start.
	ForcedCleans ForcedCleanStats
}

// RuntimeInfo returns the runtime figures that are cheap to give.
func (c *Core) RuntimeInfo() RuntimeInfo {
	return RuntimeInfo{
		BootTime:           bootTime,
		BrokerName:         c.cfg.BrokerName,
		ClusterName:        c.cfg.ClusterName,
		CommitLogMinOffset: c.store().MinPhysOffset(),
		CommitLogMaxOffset: c.store().MaxPhysOffset(),
		Topics:             len(c.topics.names()),
		HeldPulls:          c.holds.Len(),
		Goroutines:         runtime.NumGoroutine(),
		ForcedCleans:       c.ForcedCleans(),
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
	Protocol                       string // ClientMeta.Protocol
}

func connectionsOf(chans []clients.Channel[Channel]) []Connection {
	out := make([]Connection, 0, len(chans))
	for _, ch := range chans {
		conn := Connection{ClientID: ch.ClientID, Language: ch.Language, Version: ch.Version, Protocol: ch.Protocol}
		if ch.Conn != nil {
			conn.ClientAddr = ch.Conn.RemoteAddr()
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
		return ConsumerGroupInfo{}, errorf(GroupOffline, "the consumer group[%s] not online", group)
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
		return nil, errorf(NoClient, "the producer group[%s] not exist", group)
	}
	return connectionsOf(chans), nil
}
