package core

import (
	"strings"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/filter"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// Subscriptions are compiled once: a heartbeat's when it registers
// (filterOf, kept with the subscription in the client table), a pull
// consumer's from the cache its expression text keys.

// badExpression is what a heartbeat subscription that did not compile
// keeps instead of a filter, so its pulls are refused with the reason.
type badExpression struct{ err error }

// filterOf compiles a heartbeat subscription into a filter (nil passes
// everything), or a badExpression.
func (c *Core) filterOf(s clients.Subscription) any {
	switch s.ExpressionType {
	case message.ExpressionTypeSQL92:
		e, err := c.sqlCache.Compile(s.Expression)
		if err != nil {
			return badExpression{err}
		}
		return filter.NewSQL(e)
	case "", message.ExpressionTypeTag:
		if message.IsSubAll(s.Expression) {
			return nil
		}
		return filter.Tags(s.Tags, s.Codes)
	}
	return nil
}

// parseFailed refuses a subscription that does not compile (Java
// PullMessageProcessor: SUBSCRIPTION_PARSE_FAILED), with the parser's
// message.
func parseFailed(expr string, err error) error {
	return errorf(BadFilter, "parse the consumer's subscription failed: %q: %v", expr, err)
}

// sqlFilter checks that SQL92 filtering is enabled and returns the
// compiled filter of expr.
func (c *Core) sqlFilter(expr string) (store.Filter, error) {
	if !c.cfg.EnablePropertyFilter {
		return nil, refuse(FilterUnsupported, "The broker does not support consumer to filter message by SQL92")
	}
	e, err := c.sqlCache.Compile(expr)
	if err != nil {
		return nil, parseFailed(expr, err)
	}
	return filter.NewSQL(e), nil
}

// retrySQL filters a %RETRY% queue with the group's SQL92 subscriptions of
// the topics its messages came from (filterSupportRetry): a retried
// message is matched against the expression of its RETRY_TOPIC, and
// passes when that topic has no SQL92 subscription, as Java's
// ExpressionForRetryMessageFilter.
type retrySQL struct {
	c     *Core
	group string
}

func (retrySQL) MatchTagsCode(int64) bool { return true }

func (f retrySQL) MatchRecord(rec []byte) bool {
	props, ok := message.StoredProperties(rec)
	if !ok {
		return false
	}
	topic, ok := message.LookupProperty(props, message.PropertyRetryTopic)
	if !ok {
		return true
	}
	sub, _, ok := f.c.clients.Subscription(f.group, topic)
	if !ok || sub.ExpressionType != message.ExpressionTypeSQL92 {
		return true
	}
	sf, ok := sub.Filter.(filter.SQL)
	if !ok {
		return true // a bad expression is refused on its own topic's pulls
	}
	return sf.Match(props)
}

// retryFilter returns the filter of a pull of the group's retry topic when
// filterSupportRetry is on and the group has an SQL92 subscription; nil
// otherwise.
func (c *Core) retryFilter(group, topic string) store.Filter {
	if !c.cfg.FilterSupportRetry || !strings.HasPrefix(topic, retryGroupPrefix) {
		return nil
	}
	g, ok := c.clients.Group(group)
	if !ok {
		return nil
	}
	for _, s := range g.Subscriptions {
		if s.ExpressionType == message.ExpressionTypeSQL92 {
			return retrySQL{c: c, group: group}
		}
	}
	return nil
}
