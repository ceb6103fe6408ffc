package protocol

import (
	"slices"
	"strings"

	"github.com/runnelmq/runnel/message"
)

// SubAll is the subscription expression that matches every message.
const SubAll = "*"

// IsSubAll reports whether a tag expression matches everything: "*" or
// empty (after trimming), as in Java's FilterAPI.
func IsSubAll(expr string) bool {
	expr = strings.TrimSpace(expr)
	return expr == "" || expr == SubAll
}

// ParseSubExpression splits a tag expression such as "TagA || TagB" into
// its tags (trimmed, empties dropped, duplicates removed, in order) and their
// message.TagsHashCode codes. An expression that matches everything (see IsSubAll)
// yields no tags and no codes.
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
		codes = append(codes, message.TagsHashCode(t))
	}
	return tags, codes
}

// BuildSubscriptionData returns the TAG subscription of topic to expr, as a
// client would put it in a heartbeat (without SubVersion).
func BuildSubscriptionData(topic, expr string) SubscriptionData {
	s := SubscriptionData{Topic: topic, ExpressionType: ExpressionTypeTag}
	if IsSubAll(expr) {
		s.SubString = SubAll
		return s
	}
	s.SubString = expr
	s.TagsSet, s.CodeSet = ParseSubExpression(expr)
	return s
}

// MatchesTag reports whether a message with this TAGS value passes a TAG
// subscription. It compares tag strings rather than codes: the official Go
// client computes codeSet with a byte hash that differs from Java's for
// non-ASCII tags, but its tagsSet strings are exact. A subscription with
// codes but no tags (a peer that sent only codeSet) falls back to codes.
func (s *SubscriptionData) MatchesTag(tag string) bool {
	if IsSubAll(s.SubString) {
		return true
	}
	if len(s.TagsSet) > 0 {
		return tag != "" && slices.Contains(s.TagsSet, tag)
	}
	return tag != "" && slices.Contains(s.CodeSet, message.TagsHashCode(tag))
}

// MatchesTagsCode reports whether a consume-queue entry with this tag code
// may pass a TAG subscription; collisions are possible, so the caller still
// checks the tag string when it has the message (MatchesTag).
func (s *SubscriptionData) MatchesTagsCode(code int64) bool {
	if IsSubAll(s.SubString) {
		return true
	}
	if slices.Contains(s.CodeSet, code) {
		return true
	}
	for _, t := range s.TagsSet {
		if message.TagsHashCode(t) == code {
			return true
		}
	}
	return false
}
