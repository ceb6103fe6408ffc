package protocol

import (
	"slices"

	"github.com/runnelmq/runnel/message"
)

// SubAll, IsSubAll and ParseSubExpression are package message's: it owns
// tag expressions (their parse and their hash codes); the wire carries
// them in SubscriptionData.
const SubAll = message.SubAll

var (
	IsSubAll           = message.IsSubAll
	ParseSubExpression = message.ParseSubExpression
)

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
