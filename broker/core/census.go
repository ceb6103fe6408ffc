package core

import (
	"strings"

	"github.com/runnelmq/runnel/broker/clients"
)

// What metrics read at scrape time; nothing here is on a send or pull path.

// ProducerCensus counts connected producers by group, language and version.
func (c *Core) ProducerCensus() []clients.Census { return c.clients.ProducerCensus() }

// ConsumerCensus counts connected consumers by group, language and version.
func (c *Core) ConsumerCensus() []clients.Census { return c.clients.ConsumerCensus() }

// TopicCount returns how many topics the topic table holds, system topics
// included (Java's rocketmq_topic_number counts its whole table).
func (c *Core) TopicCount() int {
	c.topics.mu.RLock()
	defer c.topics.mu.RUnlock()
	return len(c.topics.mu.topics)
}

// IsSystemTopic reports whether t is one of RocketMQ's system topics.
func IsSystemTopic(t string) bool { return isSystemTopic(t) }

// IsSystemGroup reports whether g is a system consumer group (Java
// CID_RMQ_SYS_ prefix, matched without case).
func IsSystemGroup(g string) bool {
	const prefix = "cid_rmq_sys_"
	return len(g) >= len(prefix) && strings.EqualFold(g[:len(prefix)], prefix)
}
