package protocol

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/message"
)

// Heartbeat (HEART_BEAT, 34) body values.
const (
	ConsumeActively  = "CONSUME_ACTIVELY"  // pull consumer
	ConsumePassively = "CONSUME_PASSIVELY" // push consumer

	MessageModelClustering   = groupconf.Clustering
	MessageModelBroadcasting = groupconf.Broadcasting

	ConsumeFromLastOffset  = "CONSUME_FROM_LAST_OFFSET"
	ConsumeFromFirstOffset = "CONSUME_FROM_FIRST_OFFSET"
	ConsumeFromTimestamp   = "CONSUME_FROM_TIMESTAMP"

	ExpressionTypeTag   = message.ExpressionTypeTag
	ExpressionTypeSQL92 = message.ExpressionTypeSQL92
)

// HeartbeatData is the body of HEART_BEAT: every producer and consumer
// group of one client process (RocketMQ HeartbeatData; Go client
// internal/model.go heartbeatData).
type HeartbeatData struct {
	ClientID        string         `json:"clientID"`
	ProducerDataSet []ProducerData `json:"producerDataSet"`
	ConsumerDataSet []ConsumerData `json:"consumerDataSet"`
	// HeartbeatFingerprint and WithoutSub come from Java 5 clients' heartbeat
	// V2; with WithoutSub the broker keeps the previous subscriptions.
	HeartbeatFingerprint int32 `json:"heartbeatFingerprint,omitempty"`
	WithoutSub           bool  `json:"isWithoutSub,omitempty"`
}

// ProducerData names one producer group.
type ProducerData struct {
	GroupName string `json:"groupName"`
}

// ConsumerData describes one consumer group of the client.
type ConsumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         string             `json:"consumeType"`      // ConsumeActively or ConsumePassively
	MessageModel        string             `json:"messageModel"`     // MessageModelClustering or ...Broadcasting
	ConsumeFromWhere    string             `json:"consumeFromWhere"` // ConsumeFrom*
	SubscriptionDataSet []SubscriptionData `json:"subscriptionDataSet"`
	UnitMode            bool               `json:"unitMode"`
}

// SubscriptionData is one topic subscription of a consumer group.
type SubscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	Topic           string   `json:"topic"`
	SubString       string   `json:"subString"` // the expression; "*" = all
	TagsSet         []string `json:"tagsSet"`
	CodeSet         CodeSet  `json:"codeSet"`
	// SubVersion is a version stamp: nanoseconds from the Go client,
	// milliseconds from Java clients.
	SubVersion     int64  `json:"subVersion"`
	ExpressionType string `json:"expressionType"` // TAG (also when empty) or SQL92
}

// IsTagType reports whether the subscription filters by tag; an empty
// expression type counts as TAG, as in Java.
func (s *SubscriptionData) IsTagType() bool {
	return s.ExpressionType == "" || s.ExpressionType == ExpressionTypeTag
}

// CodeSet is a set of tag hash codes. The Go client sends them as JSON
// strings ("2598919"), Java as numbers; both decode. It encodes as numbers,
// which Java's Set<Integer> and this decoder accept.
type CodeSet []int64

// UnmarshalJSON accepts an array of numbers or numeric strings, or null.
func (c *CodeSet) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*c = nil
		return nil
	}
	out := make(CodeSet, 0, len(raw))
	for _, r := range raw {
		s := string(r)
		if len(s) >= 2 && s[0] == '"' {
			if err := json.Unmarshal(r, &s); err != nil {
				return err
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("codeSet entry %s is not an integer", r)
		}
		out = append(out, n)
	}
	*c = out
	return nil
}

// Encode returns the body as JSON. Nil sets encode as [] so Java's
// fastjson and the official client see the shapes they send themselves.
func (h HeartbeatData) Encode() ([]byte, error) {
	if h.ProducerDataSet == nil {
		h.ProducerDataSet = []ProducerData{}
	}
	if h.ConsumerDataSet == nil {
		h.ConsumerDataSet = []ConsumerData{}
	}
	cs := make([]ConsumerData, len(h.ConsumerDataSet))
	for i, c := range h.ConsumerDataSet {
		subs := make([]SubscriptionData, len(c.SubscriptionDataSet))
		for j, s := range c.SubscriptionDataSet {
			if s.TagsSet == nil {
				s.TagsSet = []string{}
			}
			if s.CodeSet == nil {
				s.CodeSet = CodeSet{}
			}
			subs[j] = s
		}
		c.SubscriptionDataSet = subs
		cs[i] = c
	}
	h.ConsumerDataSet = cs
	return json.Marshal(h)
}

// DecodeHeartbeatData parses a HEART_BEAT body.
func DecodeHeartbeatData(body []byte) (*HeartbeatData, error) {
	return decodeBodyAs[HeartbeatData]("HEART_BEAT", body)
}
