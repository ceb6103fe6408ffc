package admin

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/topicconf"
)

// RocketMQ 5 carries attribute changes of topics and consumer groups as a
// list "+key=value,+key2=value2,-key3": + adds or changes an attribute, -
// removes one (Java's AttributeParser). A topic's travel in
// UPDATE_AND_CREATE_TOPIC's header field "attributes" in that form; a
// group's in its config body as a map from "+key" / "-key" to the value.

// ParseAttributes reads an attribute change list into RocketMQ's map form:
// "+key" -> value, "-key" -> "" (topicconf.ParseAttributeChanges, which
// the broker reads the list with too). It refuses what Java refuses (an
// entry without its sign, a + without a value, a - with one, a key
// twice) and an empty key or value, as ErrBadArgument.
func ParseAttributes(s string) (map[string]string, error) {
	out, err := topicconf.ParseAttributeChanges(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadArgument, err)
	}
	return out, nil
}

// FormatAttributes is ParseAttributes' inverse, keys sorted: the header
// form of a topic's changes.
func FormatAttributes(attrs map[string]string) string { return topicconf.FormatAttributeChanges(attrs) }

// topicAttributes are RocketMQ 5's topic attributes (TopicAttributes.ALL)
// and the values each takes: a list, or nil for a whole number of at least
// -1 (reserve.time). A broker checks them again: Runnel's keep
// message.type and refuse the others (topicconf.ValidateAttributes).
var topicAttributes = map[string][]string{
	"message.type":   {"UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED"},
	"queue.type":     {"BatchCQ", "SimpleCQ"},
	"cleanup.policy": {"DELETE", "COMPACTION"},
	"reserve.time":   nil,
}

// CheckTopicAttributes checks parsed topic attribute changes against
// RocketMQ 5's topic attributes, as a Java broker would: known keys, and
// values in their range.
func CheckTopicAttributes(attrs map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		name := k[1:]
		values, known := topicAttributes[name]
		if !known {
			return fmt.Errorf("%w: topic attribute %q is not one of RocketMQ's: %s", ErrBadArgument, name,
				strings.Join(slices.Sorted(maps.Keys(topicAttributes)), ", "))
		}
		v := attrs[k]
		if k[0] == '-' {
			continue
		}
		if values == nil {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < -1 {
				return fmt.Errorf("%w: topic attribute %s=%q: want a whole number, -1 or more", ErrBadArgument, name, v)
			}
			continue
		}
		if !slices.Contains(values, v) {
			return fmt.Errorf("%w: topic attribute %s=%q: want one of %s", ErrBadArgument, name, v, strings.Join(values, ", "))
		}
	}
	return nil
}
