package grpcdoor

import (
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/topicconf"
)

// Topic message types are the core's (topicconf.MessageType, the
// message.type attribute): routes list what a topic accepts, sends are
// checked against it, and a topic a gRPC client names first is MIXED.

// acceptTypes are the message types a topic of type t accepts, as routes
// list them (RouteActivity.parseTopicMessageType).
func acceptTypes(t topicconf.MessageType) []v2.MessageType {
	switch t {
	case topicconf.MessageTypeNormal:
		return []v2.MessageType{v2.MessageType_NORMAL}
	case topicconf.MessageTypeFIFO:
		return []v2.MessageType{v2.MessageType_FIFO}
	case topicconf.MessageTypeDelay:
		return []v2.MessageType{v2.MessageType_DELAY}
	case topicconf.MessageTypeTransaction:
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case topicconf.MessageTypeMixed:
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	}
	return []v2.MessageType{v2.MessageType_MESSAGE_TYPE_UNSPECIFIED}
}

// checkMessageType refuses a send whose message type is not the topic's
// (the core's CheckMessageType, the proxy's validator).
func (d *Door) checkMessageType(tc topicconf.Config, mt v2.MessageType) error {
	return d.core.CheckMessageType(tc.TopicName, topicconf.MessageType(mt.String()))
}

// topicForClient returns a topic's config; a topic that does not exist is
// created, MIXED, when the broker creates topics on first use, else
// TOPIC_NOT_FOUND.
func (d *Door) topicForClient(c caller, name string) (topicconf.Config, error) {
	if tc, ok := d.lookupTopic(name); ok {
		return tc, nil
	}
	if err := d.checkWritable(); err != nil {
		return topicconf.Config{}, err // a follower makes no topic: its leader does
	}
	return d.core.AutoCreateTopic(name, topicconf.MessageTypeMixed, "gRPC client "+c.ClientID+" "+c.Remote)
}

// lookupTopic is a topic's config: the core's table, or on a follower,
// whose table is its leader's as of its last promotion, the store the
// group's log keeps current.
func (d *Door) lookupTopic(name string) (topicconf.Config, bool) {
	if tc, ok := d.core.Topic(name); ok || d.core.IsMaster() {
		return tc, ok
	}
	tc, ok, err := d.core.Store().Topic(name)
	return tc, ok && err == nil
}
