package grpcdoor

import (
	"fmt"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/topicconf"
)

// Topic message types (RocketMQ 5's message.type topic attribute,
// TopicMessageType).
const (
	typeAttribute   = "message.type"
	typeNormal      = "NORMAL"
	typeFIFO        = "FIFO"
	typeDelay       = "DELAY"
	typeTransaction = "TRANSACTION"
	typeMixed       = "MIXED"
)

// topicType is a topic's message type: its attribute, NORMAL for a topic
// made without one (as in Java).
func (d *Door) topicType(tc topicconf.Config) string {
	if t := strings.ToUpper(strings.TrimPrefix(tc.Attributes[typeAttribute], "+")); t != "" && t != "UNSPECIFIED" {
		return t
	}
	return typeNormal
}

// acceptTypes are the message types a topic of type t accepts, as routes
// list them (RouteActivity.parseTopicMessageType).
func acceptTypes(t string) []v2.MessageType {
	switch t {
	case typeNormal:
		return []v2.MessageType{v2.MessageType_NORMAL}
	case typeFIFO:
		return []v2.MessageType{v2.MessageType_FIFO}
	case typeDelay:
		return []v2.MessageType{v2.MessageType_DELAY}
	case typeTransaction:
		return []v2.MessageType{v2.MessageType_TRANSACTION}
	case typeMixed:
		return []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY, v2.MessageType_TRANSACTION}
	}
	return []v2.MessageType{v2.MessageType_MESSAGE_TYPE_UNSPECIFIED}
}

// checkMessageType refuses a send whose message type is not the topic's,
// as the proxy's DefaultTopicMessageTypeValidator does (a MIXED topic
// takes every type).
func (d *Door) checkMessageType(tc topicconf.Config, mt v2.MessageType) error {
	t := d.topicType(tc)
	if t == typeMixed {
		return nil
	}
	if mt.String() != t {
		return refuse(v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, fmt.Sprintf(
			"current message type not match with topic accept message types, topic %s accepts %s, the message is %s",
			tc.TopicName, t, mt))
	}
	return nil
}

// topicForClient returns a topic's config; a topic that does not exist is
// created, MIXED, when the broker creates topics on first use (as a
// remoting producer's send does from TBW102), else TOPIC_NOT_FOUND.
func (d *Door) topicForClient(c caller, name string) (topicconf.Config, error) {
	if tc, ok := d.lookupTopic(name); ok {
		return tc, nil
	}
	if err := d.checkWritable(); err != nil {
		return topicconf.Config{}, err // a follower makes no topic: its leader does
	}
	if !d.cfg.AutoCreateTopic {
		return topicconf.Config{}, refuse(v2.Code_TOPIC_NOT_FOUND, fmt.Sprintf("topic %s not exist, apply first please! (autoCreateTopicEnable=false)", name))
	}
	def, ok := d.core.Topic(topicconf.DefaultTopic)
	if !ok {
		return topicconf.Config{}, refuse(v2.Code_TOPIC_NOT_FOUND, fmt.Sprintf("topic %s not exist, and the auto-create template %s is missing", name, topicconf.DefaultTopic))
	}
	tc := topicconf.New(name)
	tc.ReadQueueNums, tc.WriteQueueNums = def.WriteQueueNums, def.WriteQueueNums
	tc.Perm = def.Perm &^ topicconf.PermInherit
	tc.Attributes = map[string]string{typeAttribute: typeMixed}
	if err := d.core.CreateTopic(tc, "gRPC client "+c.ClientID+" "+c.Remote); err != nil {
		if _, ok := core.ReasonOf(err); ok {
			return topicconf.Config{}, err
		}
		return topicconf.Config{}, refuse(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
	}
	d.log.Info("grpcdoor: topic created on first use, MIXED", "topic", name, "client", c.ClientID)
	tc, _ = d.core.Topic(name)
	return tc, nil
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
