package core

import (
	"maps"

	"github.com/runnelmq/runnel/topicconf"
)

// Topic message types (RocketMQ 5): a topic's message.type attribute says
// which messages it takes (topicconf.MessageType); a topic without it is
// NORMAL. The gRPC door checks each send against it, as the proxy does
// (CheckMessageType); remoting sends are not checked, as in Java.

// CheckMessageType refuses a send of a message of type t to topic unless
// the topic's type accepts it (the proxy's DefaultTopicMessageTypeValidator,
// with its remark): the same type, or any type on a MIXED topic. A topic
// that does not exist is TopicNotFound.
func (c *Core) CheckMessageType(topic string, t topicconf.MessageType) error {
	tc, ok := c.readTopic(topic, c.be.IsLeader())
	if !ok {
		return errorf(TopicNotFound, "topic[%s] not exist, apply first please!", topic)
	}
	if want := tc.MessageType(); !want.Accepts(t) {
		return errorf(MessageTypeMismatch, "TopicMessageType validate failed, the expected type is %s, but actual type is %s", want, t)
	}
	return nil
}

// AutoCreateTopic creates topic on a client's first use, where
// auto-creation is on (autoCreateTopicEnable, as in a dev cluster), with
// the auto-create template's queue count and perm and message type t: a
// gRPC client's first use asks for MIXED, so a test sends FIFO, delay and
// transactional messages without making topics first. A topic that exists
// is returned as it is. Without auto-creation, or for a name a client
// may not create, it is refused as a send to it would be. The name
// servers have the route before it returns.
func (c *Core) AutoCreateTopic(topic string, t topicconf.MessageType, by string) (topicconf.Config, error) {
	if tc, ok := c.topics.get(topic); ok {
		return tc, nil
	}
	if remark, ok := checkTopicName(topic); !ok {
		return topicconf.Config{}, refuse(InvalidName, remark)
	}
	if isSystemTopic(topic) || isRetryTopic(topic) || topic == c.cfg.ClusterName || topic == c.cfg.BrokerName {
		return topicconf.Config{}, errorf(ReservedName, "The topic[%s] is conflict with system topic.", topic)
	}
	def, ok := c.topics.get(topicAutoCreate)
	if !c.cfg.AutoCreateTopicEnable || !ok || !topicconf.IsInherited(def.Perm) {
		return topicconf.Config{}, errorf(TopicNotFound,
			"topic[%s] not exist, apply first please! (autoCreateTopicEnable=%t)", topic, c.cfg.AutoCreateTopicEnable)
	}
	if err := c.checkBrokerWritable(); err != nil {
		return topicconf.Config{}, err
	}
	nc := newTopic(topic, def.WriteQueueNums, def.Perm&^topicconf.PermInherit)
	if t != "" {
		nc.Attributes = map[string]string{topicconf.AttributeMessageType: string(t)}
		if err := topicconf.ValidateAttributes(nc.Attributes); err != nil {
			return topicconf.Config{}, refuse(InvalidArgument, err.Error())
		}
	}
	tc, created, err := c.topics.createIfAbsent(nc)
	if err != nil {
		return topicconf.Config{}, c.notMaster(err)
	}
	if created {
		c.log.Info("broker: topic created on first use", "topic", topic, "type", tc.MessageType(), "queues", tc.WriteQueueNums, "by", by)
		c.cfg.TopicsChanged(true)
	}
	return tc, nil
}

// sameAttributes says whether two topics' attributes are the same (none
// and empty alike).
func sameAttributes(a, b map[string]string) bool { return maps.Equal(a, b) }
