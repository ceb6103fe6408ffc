package message

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// TagsHashCode is the tag code RocketMQ stores in consume-queue entries and
// subscriptions: Java's String.hashCode of the tag, computed over UTF-16 code
// units (a code point above U+FFFF counts as its two surrogates), widened to
// int64. Invalid UTF-8 counts as U+FFFD per bad byte. For ASCII tags it
// equals the official Go client's byte hash; for other tags the two differ,
// and Java's is the one brokers use.
func TagsHashCode(tag string) int64 {
	var h int32
	for i := 0; i < len(tag); {
		c := tag[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(tag[i:])
		i += n
		if r > 0xFFFF {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return int64(h)
}

// Subscription expression types (RocketMQ ExpressionType): a tag
// expression, or SQL92 over the message's properties. An empty type is a
// tag expression.
const (
	ExpressionTypeTag   = "TAG"
	ExpressionTypeSQL92 = "SQL92"
)

// SubAll is the tag expression that matches every message.
const SubAll = "*"

// IsSubAll reports whether a tag expression matches everything: "*" or
// empty (after trimming), as in Java's FilterAPI.
func IsSubAll(expr string) bool {
	expr = strings.TrimSpace(expr)
	return expr == "" || expr == SubAll
}

// ParseSubExpression splits a tag expression such as "TagA || TagB" into
// its tags (trimmed, empties dropped, duplicates removed, in order) and
// their TagsHashCode codes. An expression that matches everything (see
// IsSubAll) yields no tags and no codes.
func ParseSubExpression(expr string) (tags []string, codes []int64) {
	if IsSubAll(expr) {
		return nil, nil
	}
	for part := range strings.SplitSeq(expr, "||") {
		t := strings.TrimSpace(part)
		if t == "" || slices.Contains(tags, t) {
			continue
		}
		tags = append(tags, t)
		codes = append(codes, TagsHashCode(t))
	}
	return tags, codes
}
