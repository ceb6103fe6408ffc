package core

import (
	"errors"
	"fmt"
)

// Reason says why the core refused a request, in the core's own terms.
// Each front door maps a Reason to its protocol's answer in one table:
// the remoting door to a RocketMQ response code, the gRPC door to an
// apache.rocketmq.v2.Code. Reasons are as fine as the answers Java gives
// differ: where the Java broker answers two situations with different
// codes, they are two reasons here, so a door never needs to know which
// request a refusal came from.
type Reason uint8

// The reasons. The RocketMQ response code each one is answered with over
// remoting is named in brackets (remotingdoor's table owns the mapping).
const (
	// Internal: the broker failed: a store read or write, an encoding
	// [SYSTEM_ERROR].
	Internal Reason = iota
	// BadRequest: a request that misses a field or carries one that does
	// not parse [SYSTEM_ERROR, as Java answers a header it cannot read].
	BadRequest
	// InvalidName: a topic or group name RocketMQ's rules refuse
	// [SYSTEM_ERROR].
	InvalidName
	// ReservedName: a name a system topic, the cluster or the broker holds
	// [SYSTEM_ERROR].
	ReservedName
	// InvalidArgument: a value out of its range (queue counts, perm bits, a
	// group's config, a queue id) [INVALID_PARAMETER].
	InvalidArgument
	// IllegalMessage: a message the broker will not store: too large, bad
	// properties, a kind a batch cannot carry, a timer due too late
	// [MESSAGE_ILLEGAL].
	IllegalMessage
	// Forbidden: the topic's, the group's or the broker's permission
	// refuses it [NO_PERMISSION].
	Forbidden
	// Unavailable: the broker takes no writes now: its disk is full, it is
	// shutting down, or it is a slave [SERVICE_NOT_AVAILABLE].
	Unavailable
	// TopicNotFound: the topic does not exist [TOPIC_NOT_EXIST].
	TopicNotFound
	// GroupOffline: the consumer group asked about has no live member
	// [CONSUMER_NOT_ONLINE].
	GroupOffline
	// NoClient: a call to be forwarded to a client found no live client to
	// take it, or a listing of a group's clients found none [SYSTEM_ERROR,
	// as Java answers these].
	NoClient
	// ClientTimeout: a client did not answer a forwarded call in time
	// [CONSUME_MSG_TIMEOUT].
	ClientTimeout
	// SubscriptionNotFound: a pull names a subscription the broker does not
	// hold [SUBSCRIPTION_NOT_EXIST].
	SubscriptionNotFound
	// SubscriptionStale: a pull's subscription is older than the one the
	// broker holds [SUBSCRIPTION_NOT_LATEST].
	SubscriptionStale
	// BadFilter: a subscription expression that does not parse
	// [SUBSCRIPTION_PARSE_FAILED].
	BadFilter
	// FilterUnsupported: a SQL92 subscription where the broker does not
	// filter by properties (enablePropertyFilter=false) [SYSTEM_ERROR].
	FilterUnsupported
	// FilterDataMissing: a SQL92 pull whose compiled filter the broker does
	// not hold [FILTER_DATA_NOT_EXIST].
	FilterDataMissing
	// NoMessage: the message a request names by offset or id is not there
	// [SYSTEM_ERROR, as Java's lookups answer].
	NoMessage
	// NotFound: a query (by key, of a committed offset) found nothing
	// [QUERY_NOT_FOUND].
	NotFound
	// TransactionRefused: an END_TRANSACTION whose half message cannot be
	// ended (gone, or not the one named) [SYSTEM_ERROR].
	TransactionRefused
	// InvalidReceipt: a POP receipt handle that does not parse, is another
	// broker's, or names no message in flight (acknowledged, its
	// invisible time changed, or brought back since) [NO_MESSAGE; gRPC
	// INVALID_RECEIPT_HANDLE].
	InvalidReceipt
	// ExpiredReceipt: a POP receipt handle whose invisible time passed:
	// the message comes back [NO_MESSAGE; gRPC INVALID_RECEIPT_HANDLE].
	ExpiredReceipt
	// MessageTypeMismatch: a send whose message type (normal, FIFO,
	// delay, transactional) is not the topic's message.type (the proxy's
	// DefaultTopicMessageTypeValidator) [MESSAGE_ILLEGAL; gRPC
	// MESSAGE_PROPERTY_DOES_NOT_MATCH_MESSAGE_TYPE].
	MessageTypeMismatch
	// IllegalOperation: an operation the state of what it names refuses: a
	// recall handle that does not parse, is another topic's or broker's,
	// or whose time has passed [ILLEGAL_OPERATION; gRPC BAD_REQUEST].
	IllegalOperation
)

var reasonNames = [...]string{
	Internal: "internal", BadRequest: "bad request", InvalidName: "invalid name",
	ReservedName: "reserved name", InvalidArgument: "invalid argument",
	IllegalMessage: "illegal message", Forbidden: "forbidden", Unavailable: "unavailable",
	TopicNotFound: "topic not found", GroupOffline: "group offline", NoClient: "no client",
	ClientTimeout: "client timeout", SubscriptionNotFound: "subscription not found",
	SubscriptionStale: "subscription stale", BadFilter: "bad filter",
	FilterUnsupported: "filter unsupported", FilterDataMissing: "filter data missing",
	NoMessage: "no message", NotFound: "not found", TransactionRefused: "transaction refused",
	InvalidReceipt: "invalid receipt handle", ExpiredReceipt: "expired receipt handle",
	MessageTypeMismatch: "message type mismatch", IllegalOperation: "illegal operation",
}

// Reasons are every Reason, for the doors' tests that map each one.
func Reasons() []Reason {
	out := make([]Reason, len(reasonNames))
	for i := range out {
		out[i] = Reason(i)
	}
	return out
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// Error is a refusal: why, and the remark a client is told (Java's text
// where Java refuses the same, since users search for it).
type Error struct {
	Reason Reason
	Remark string
}

func (e *Error) Error() string { return "core: " + e.Reason.String() + ": " + e.Remark }

// Refuse returns a refusal for reason with a formatted remark; the broker
// process uses it for refusals of its own (runtime configuration).
func Refuse(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Remark: fmt.Sprintf(format, args...)}
}

// errorf returns a refusal with a formatted remark.
func errorf(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Remark: fmt.Sprintf(format, args...)}
}

// refuse returns a refusal with a remark taken as it is.
func refuse(reason Reason, remark string) *Error { return &Error{Reason: reason, Remark: remark} }

// ReasonOf returns the first *Error in err's chain, if any.
func ReasonOf(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrClientTimeout is what a Channel's call returns (wrapped) when the
// client did not answer in time.
var ErrClientTimeout = errors.New("core: client did not answer in time")
