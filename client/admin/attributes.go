package admin

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// RocketMQ 5 carries attribute changes of topics and consumer groups as a
// list "+key=value,+key2=value2,-key3": + adds or changes an attribute, -
// removes one (Java's AttributeParser). A topic's travel in
// UPDATE_AND_CREATE_TOPIC's header field "attributes" in that form; a
// group's in its config body as a map from "+key" / "-key" to the value.

// ParseAttributes reads an attribute change list into RocketMQ's map form:
// "+key" -> value, "-key" -> "". It refuses what Java refuses (an entry
// without its sign, a + without a value, a - with one, a key twice) and an
// empty key or value.
func ParseAttributes(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		key, value, hasValue := strings.Cut(kv, "=")
		switch {
		case hasValue && !strings.HasPrefix(key, "+"):
			return nil, fmt.Errorf("%w: attribute %q: a change is +key=value", ErrBadArgument, kv)
		case !hasValue && !strings.HasPrefix(key, "-"):
			return nil, fmt.Errorf("%w: attribute %q: want +key=value to set or -key to remove", ErrBadArgument, kv)
		case len(key) < 2:
			return nil, fmt.Errorf("%w: attribute %q has no key", ErrBadArgument, kv)
		case hasValue && value == "":
			return nil, fmt.Errorf("%w: attribute %q has no value", ErrBadArgument, kv)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%w: attribute %s given twice", ErrBadArgument, key)
		}
		out[key] = value
	}
	return out, nil
}

// FormatAttributes is ParseAttributes' inverse, keys sorted: the header
// form of a topic's changes.
func FormatAttributes(attrs map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		if v := attrs[k]; v != "" {
			b.WriteString("=" + v)
		}
	}
	return b.String()
}

// topicAttributes are RocketMQ 5's topic attributes (TopicAttributes.ALL)
// and the values each takes: a list, or nil for a whole number of at least
// -1 (reserve.time). A broker checks them again; Runnel's brokers do not
// act on them yet.
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
