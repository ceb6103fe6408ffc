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

// ParseAttributeChanges reads RocketMQ's attribute change list, "+key=value,+key2=value2,-key3"
// (Java's AttributeParser: + adds or changes an attribute, - removes
// one; spaces around an entry are dropped), into Java's map form: "+key"
// -> value, "-key" -> "". It refuses what Java refuses (an entry without
// its sign, a + without a value, a - with one, a key twice) and an empty
// key. Topics carry the list in UPDATE_AND_CREATE_TOPIC's attributes
// field, groups the map in their config body.
func ParseAttributeChanges(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		key, value, hasValue := strings.Cut(kv, "=")
		switch {
		case hasValue && !strings.HasPrefix(key, "+"):
			return nil, fmt.Errorf("topicconf: attribute %q: a change is +key=value", kv)
		case !hasValue && !strings.HasPrefix(key, "-"):
			return nil, fmt.Errorf("topicconf: attribute %q: want +key=value to set or -key to remove", kv)
		case len(key) < 2:
			return nil, fmt.Errorf("topicconf: attribute %q has no key", kv)
		case hasValue && value == "":
			return nil, fmt.Errorf("topicconf: attribute %q has no value", kv)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("topicconf: attribute %s given twice", key)
		}
		out[key] = value
	}
	return out, nil
}

// FormatAttributeChanges is ParseAttributeChanges' inverse, keys sorted.
func FormatAttributeChanges(changes map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		if v := changes[k]; v != "" {
			b.WriteString("=" + v)
		}
	}
	return b.String()
}

// AlterAttributes applies a change list (ParseAttributeChanges' text) to
// current, and returns the result, validated (ValidateAttributes); current
// is not modified. Empty changes keep current as it is: Java's
// UPDATE_AND_CREATE_TOPIC without attributes keeps a topic's.
func AlterAttributes(current map[string]string, changes string) (map[string]string, error) {
	parsed, err := ParseAttributeChanges(changes)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(current)
	for _, k := range slices.Sorted(maps.Keys(parsed)) {
		if k[0] == '+' {
			if out == nil {
				out = map[string]string{}
			}
			out[k[1:]] = parsed[k]
		} else {
			delete(out, k[1:])
		}
	}
	if err := ValidateAttributes(out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		out = nil
	}
	return out, nil
}
