// Package filter owns the broker's message filters, which the store asks
// of every message a pull reads: tag filters, matched against the consume
// queue's tag hash without reading the message, and SQL92 filters,
// matched against the stored message's properties (broker/filter/sql92
// compiles and evaluates the expressions).
//
// Invariants:
//   - a nil filter (from Tags on "*", or no subscription) passes every
//     message;
//   - a tag filter may pass a message whose tag only collides in hash:
//     consumers filter by tag string again, so a collision costs a wasted
//     transfer, never a wrong delivery; SQL92 matches are exact, since a
//     consumer cannot evaluate SQL92 again;
//   - filters are immutable once built and safe for concurrent pulls.
package filter

import (
	"github.com/runnelmq/runnel/broker/filter/sql92"
	"github.com/runnelmq/runnel/message"
)

// Filter is what the store asks of each message (it is store.Filter).
type Filter interface {
	MatchTagsCode(code int64) bool
	MatchRecord(rec []byte) bool
}

// tags matches consume-queue tag hashes against a TAG subscription. It
// holds the codes the subscriber sent and the Java hash of each tag string,
// since the official Go client hashes non-ASCII tags differently from the
// store.
type tags struct {
	codes map[int64]struct{}
}

// Tags returns the filter of a TAG subscription given as its tag strings
// and the hash codes the client computed; nil (everything) for "*" or an
// empty subscription.
func Tags(tagSet []string, codes []int64) Filter {
	if len(tagSet) == 0 && len(codes) == 0 {
		return nil
	}
	f := tags{codes: make(map[int64]struct{}, len(tagSet)+len(codes))}
	for _, c := range codes {
		f.codes[c] = struct{}{}
	}
	for _, t := range tagSet {
		if t == message.SubAll {
			return nil
		}
		f.codes[message.TagsHashCode(t)] = struct{}{}
	}
	return f
}

// TagExpression returns the filter of a TAG subscription expression
// ("A || B", "*").
func TagExpression(expr string) Filter {
	t, codes := message.ParseSubExpression(expr)
	return Tags(t, codes)
}

func (f tags) MatchTagsCode(code int64) bool {
	_, ok := f.codes[code]
	return ok
}

func (f tags) MatchRecord([]byte) bool { return true }

// SQL is a compiled SQL92 subscription, matched against each stored
// message's properties (TAGS among them).
type SQL struct {
	expr *sql92.Expr
}

// NewSQL returns the filter of a compiled expression.
func NewSQL(e *sql92.Expr) SQL { return SQL{expr: e} }

// MatchTagsCode passes everything: the tag hash says nothing of SQL92.
func (SQL) MatchTagsCode(int64) bool { return true }

// MatchRecord evaluates the expression on the record's properties. A record
// whose properties cannot be found does not match.
func (f SQL) MatchRecord(rec []byte) bool {
	props, ok := message.StoredProperties(rec)
	if !ok {
		return false
	}
	return f.Match(props)
}

// Match evaluates the expression on a raw property string.
func (f SQL) Match(props []byte) bool {
	return f.expr.Match(func(name string) (string, bool) { return message.LookupProperty(props, name) })
}

// Expr returns the compiled expression.
func (f SQL) Expr() *sql92.Expr { return f.expr }
