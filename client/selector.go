package client

import (
	"hash/fnv"
	"sync/atomic"

	"github.com/runnelmq/runnel/client/queue"
)

// QueueSelector picks the queue a message is sent to. mqs is never empty,
// and is the route's own list, to read, not to write; lastBroker is the
// broker of the previous failed attempt ("" on the first), which a selector
// should avoid when it can.
type QueueSelector interface {
	Select(msg *Message, mqs []queue.MessageQueue, lastBroker string) queue.MessageQueue
}

// RoundRobinSelector spreads messages over all writable queues in turn,
// skipping the last failed broker on a retry. The producer's default.
type RoundRobinSelector struct{ n atomic.Uint64 }

// Select implements QueueSelector.
func (s *RoundRobinSelector) Select(_ *Message, mqs []queue.MessageQueue, lastBroker string) queue.MessageQueue {
	start := s.n.Add(1)
	if lastBroker != "" {
		for i := range uint64(len(mqs)) {
			mq := mqs[(start+i)%uint64(len(mqs))]
			if mq.BrokerName != lastBroker {
				return mq
			}
		}
	}
	return mqs[start%uint64(len(mqs))]
}

// HashSelector sends messages with the same sharding key (Message.ShardingKey,
// else the first key, else the tag) to the same queue, which keeps them in
// order for an orderly consumer. It does not move to another broker on
// retry: that would break the order.
type HashSelector struct{}

// Select implements QueueSelector.
func (HashSelector) Select(msg *Message, mqs []queue.MessageQueue, _ string) queue.MessageQueue {
	key := msg.ShardingKey
	if key == "" && len(msg.Keys) > 0 {
		key = msg.Keys[0]
	}
	if key == "" {
		key = msg.Tags
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return mqs[h.Sum32()%uint32(len(mqs))]
}
