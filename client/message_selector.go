package client

import (
	"fmt"
	"strings"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// ExpressionType says how a subscription's expression is read.
type ExpressionType string

const (
	// TagExpression: "*" (or empty) for every message, else tags joined by
	// "||" ("TagA || TagB"). The default.
	TagExpression ExpressionType = protocol.ExpressionTypeTag
	// SQL92Expression: a condition over message properties, such as
	// "a > 5 AND TAGS IN ('x', 'y')". The broker evaluates it (a RocketMQ
	// broker only with enablePropertyFilter=true); the client delivers
	// what the broker sends, since it cannot evaluate it again.
	SQL92Expression ExpressionType = protocol.ExpressionTypeSQL92
)

// MessageSelector chooses which messages of a topic a consumer receives.
type MessageSelector struct {
	// Type says how Expression is read. Default TagExpression.
	Type ExpressionType
	// Expression is the tag expression or SQL92 condition.
	Expression string
}

// TagSelector selects by tag expression ("*", "TagA || TagB").
func TagSelector(expr string) MessageSelector {
	return MessageSelector{Type: TagExpression, Expression: expr}
}

// SQL92Selector selects by a SQL92 condition over message properties.
func SQL92Selector(expr string) MessageSelector {
	return MessageSelector{Type: SQL92Expression, Expression: expr}
}

// subscription returns the subscription of topic to s as it goes into
// heartbeats and pulls, stamped with a version (RocketMQ's subVersion,
// which a broker compares to tell a newer SQL92 filter from an older).
// An SQL92 expression is sent as written, without tag sets; the client
// cannot check it, the broker does.
func (s MessageSelector) subscription(topic string) (protocol.SubscriptionData, error) {
	var sub protocol.SubscriptionData
	switch s.Type {
	case "", TagExpression:
		sub = protocol.BuildSubscriptionData(topic, s.Expression)
	case SQL92Expression:
		expr := strings.TrimSpace(s.Expression)
		if expr == "" {
			return sub, fmt.Errorf("%w: topic %s: empty SQL92 expression", ErrBadConfig, topic)
		}
		sub = protocol.SubscriptionData{Topic: topic, SubString: expr, ExpressionType: protocol.ExpressionTypeSQL92}
	default:
		return sub, fmt.Errorf("%w: topic %s: expression type %q, want %s or %s", ErrBadConfig, topic, s.Type, TagExpression, SQL92Expression)
	}
	sub.SubVersion = time.Now().UnixNano()
	return sub, nil
}
