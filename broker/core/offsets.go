package core

import (
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/message"
)

// QueryConsumerOffset returns a group's offset on a queue, as Java's
// ConsumerManageProcessor: the committed offset; else 0 when the queue
// still holds its first message (offset 0), so that a new group on a young
// broker reads from the start whatever its consume-from setting; else
// QUERY_NOT_FOUND.
func (c *Core) QueryConsumerOffset(group, topic string, queueID int32) (int64, error) {
	off, ok := c.offsets.Get(offsets.Key{Group: group, Topic: topic, QueueID: queueID})
	if ok {
		return off, nil
	}
	if c.store().MinOffset(topic, queueID) > 0 || c.store().MaxOffset(topic, queueID) == 0 {
		return 0, refuse(NotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
	}
	return 0, nil
}

// CommitConsumerOffset applies a group's offset on a queue in memory; it
// is written to the store at the next persist. Negative offsets (the
// client's "unknown") are ignored.
func (c *Core) CommitConsumerOffset(group, topic string, queueID int32, offset int64) {
	c.offsets.Commit(offsets.Key{Group: group, Topic: topic, QueueID: queueID}, offset)
}

// MaxOffset is the offset the next message of a queue will get (0 for an
// unknown queue, as Java).
func (c *Core) MaxOffset(topic string, queueID int32) int64 {
	return c.store().MaxOffset(topic, queueID)
}

// MinOffset is the offset of a queue's oldest message.
func (c *Core) MinOffset(topic string, queueID int32) int64 {
	return c.store().MinOffset(topic, queueID)
}

// SearchOffset returns the first offset of a queue stored at or after ts
// (ms).
func (c *Core) SearchOffset(topic string, queueID int32, ts int64) (int64, error) {
	off, err := c.store().OffsetByTime(topic, queueID, ts)
	if err != nil {
		return 0, errorf(Internal, "search offset: %v", err)
	}
	return off, nil
}

// EarliestStoreTime returns the store time of a queue's oldest message;
// -1 for an empty or unknown queue, as Java's
// MessageStore.getEarliestMessageTime (callers compare the value, they do
// not expect an error).
func (c *Core) EarliestStoreTime(topic string, queueID int32) int64 {
	if e, err := c.store().QueueEntry(topic, queueID, c.store().MinOffset(topic, queueID)); err == nil {
		return e.StoreTimestamp
	}
	return -1
}

// ResetRequest moves a group's offsets on a topic.
type ResetRequest struct {
	Group, Topic string
	// QueueID >= 0 with Offset >= 0 sets that queue to Offset; otherwise
	// every queue goes to the first message stored at or after Timestamp
	// (ms; -1: the max offset).
	QueueID   int32
	Offset    int64
	Timestamp int64
	// Force lets offsets move forward; without it they only move back.
	Force bool
}

// ResetOffset resets a group's offsets (Java Broker2Client.resetOffset)
// and returns the new table. The group's online consumers are sent the
// table. Unlike Java, the core also commits the new offsets itself, so the
// reset holds even if a client misses the message. With no consumer
// online it refuses (CONSUMER_NOT_ONLINE) and nothing changes, as in Java
// (tools then commit offsets directly).
func (c *Core) ResetOffset(r ResetRequest) (map[message.Queue]int64, error) {
	tc, ok := c.topics.get(r.Topic)
	if !ok {
		return nil, errorf(TopicNotFound, "topic[%s] not exist", r.Topic)
	}
	table := map[message.Queue]int64{}
	for q := range int32(tc.ReadQueueNums) {
		if r.QueueID >= 0 && q != r.QueueID {
			continue
		}
		var target int64
		switch {
		case r.QueueID >= 0 && r.Offset >= 0:
			target = r.Offset
		case r.Timestamp == -1:
			target = c.store().MaxOffset(r.Topic, q)
		default:
			off, err := c.store().OffsetByTime(r.Topic, q, r.Timestamp)
			if err != nil {
				return nil, errorf(Internal, "search offset of %s queue %d: %v", r.Topic, q, err)
			}
			target = off
		}
		if !r.Force {
			if cur, ok := c.offsets.Get(offsets.Key{Group: r.Group, Topic: r.Topic, QueueID: q}); ok && cur < target {
				target = cur
			}
		}
		table[message.Queue{Topic: r.Topic, BrokerName: c.cfg.BrokerName, QueueID: q}] = target
	}
	chans := liveChannels(c.clients.Channels(r.Group))
	if len(chans) == 0 {
		return nil, errorf(GroupOffline,
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", r.Group, r.Topic, r.Timestamp)
	}
	for mq, off := range table {
		c.offsets.Commit(offsets.Key{Group: r.Group, Topic: mq.Topic, QueueID: mq.QueueID}, off)
	}
	for _, ch := range chans {
		ch.ResetOffset(r.Topic, r.Group, r.Timestamp, table)
	}
	c.log.Info("broker: consumer offsets reset", "group", r.Group, "topic", r.Topic, "timestamp", r.Timestamp, "consumers", len(chans))
	return table, nil
}
