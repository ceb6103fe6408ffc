package topicconf

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// AttributeMessageType is the topic attribute naming the messages a
// topic takes (RocketMQ 5's TopicAttributes.TOPIC_MESSAGE_TYPE_ATTRIBUTE).
const AttributeMessageType = "message.type"

// MessageType is a topic's message type (Java TopicMessageType), and the
// type of a message sent to it.
type MessageType string

// The message types.
const (
	MessageTypeUnspecified MessageType = "UNSPECIFIED"
	MessageTypeNormal      MessageType = "NORMAL"
	MessageTypeFIFO        MessageType = "FIFO"
	MessageTypeDelay       MessageType = "DELAY"
	MessageTypeTransaction MessageType = "TRANSACTION"
	// MessageTypeMixed takes messages of every type: what a topic a gRPC
	// client's first use creates is.
	MessageTypeMixed MessageType = "MIXED"
)

// MessageTypes are the message types, in Java's order.
var MessageTypes = []MessageType{MessageTypeUnspecified, MessageTypeNormal, MessageTypeFIFO, MessageTypeDelay,
	MessageTypeTransaction, MessageTypeMixed}

// ParseMessageType parses a type's name (upper case, as Java writes it).
func ParseMessageType(s string) (MessageType, bool) {
	t := MessageType(s)
	return t, slices.Contains(MessageTypes, t)
}

// MessageType is the topic's message type: its message.type attribute, or
// NORMAL for a topic without one (Java's attribute default).
func (c *Config) MessageType() MessageType {
	if t, ok := ParseMessageType(c.Attributes[AttributeMessageType]); ok {
		return t
	}
	return MessageTypeNormal
}

// Accepts says whether a topic of type t takes a message of type m (Java's
// DefaultTopicMessageTypeValidator): the same type, or any on a MIXED
// topic; a message of no type never.
func (t MessageType) Accepts(m MessageType) bool {
	return m != MessageTypeUnspecified && (m == t || t == MessageTypeMixed)
}

// ValidateAttributes checks a topic's attributes: the keys Runnel knows
// (message.type) with values they take.
func ValidateAttributes(attrs map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		v := attrs[k]
		switch k {
		case AttributeMessageType:
			if _, ok := ParseMessageType(v); !ok {
				return fmt.Errorf("topicconf: attribute %s=%q: the value is not one of %v", k, v, MessageTypes)
			}
		default:
			return fmt.Errorf("topicconf: unsupported attribute %q (supported: %s)", k, AttributeMessageType)
		}
	}
	return nil
}

// AlterAttributes applies changes in RocketMQ's form ("+key=value" adds
// or changes a key, "-key" deletes it, comma separated: Java's
// AttributeParser, as mqadmin updateTopic -a sends them) to current, and
// returns the result, validated; current is not modified. Empty changes
// keep current as it is.
func AlterAttributes(current map[string]string, changes string) (map[string]string, error) {
	out := maps.Clone(current)
	if changes == "" {
		return out, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(changes, ",") {
		var key string
		if k, v, ok := strings.Cut(kv, "="); ok {
			name, plus := strings.CutPrefix(k, "+")
			if !plus || name == "" || strings.Contains(v, "=") {
				return nil, fmt.Errorf("topicconf: attribute %q: an addition is +key=value", kv)
			}
			key = name
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		} else {
			name, minus := strings.CutPrefix(kv, "-")
			if !minus || name == "" {
				return nil, fmt.Errorf("topicconf: attribute %q: a deletion is -key", kv)
			}
			key = name
			delete(out, name)
		}
		if seen[key] {
			return nil, fmt.Errorf("topicconf: attribute %q named twice", key)
		}
		seen[key] = true
	}
	if err := ValidateAttributes(out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		out = nil
	}
	return out, nil
}
