package admin

import (
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

var (
	// ErrBadConfig is wrapped by configuration errors; the message names the
	// bad field.
	ErrBadConfig = errors.New("admin: bad config")
	// ErrBadArgument is wrapped when an operation's input is unusable (an
	// empty topic, a queue count out of range); the message names it.
	ErrBadArgument = errors.New("admin: bad argument")
	// ErrNotFound is matched (errors.Is) by failures that mean the thing
	// asked for does not exist: a topic without a route, a message not
	// found, a group with no offsets.
	ErrNotFound = errors.New("admin: not found")
	// ErrUnsupported is matched by a *ResponseError whose code is
	// REQUEST_CODE_NOT_SUPPORTED: the node does not implement the request.
	ErrUnsupported = errors.New("admin: request not supported")
	// ErrNoBroker is wrapped when an operation has no broker to go to: an
	// unknown cluster or broker name, or a broker group without a master.
	ErrNoBroker = errors.New("admin: no broker")
	// ErrNotReadable is wrapped when a topic to be read has no readable
	// queue (a dead-letter topic created write-only, as brokers before
	// RocketMQ 4.7 create them).
	ErrNotReadable = errors.New("admin: not readable")
	// ErrNotOnline is matched by failures that mean no broker has the
	// consumer group, or the one client asked for, connected; also by a
	// *ResponseError whose code is CONSUMER_NOT_ONLINE.
	ErrNotOnline = errors.New("admin: consumer not online")
)

// CallError is a request that got no usable answer from one node: it
// could not connect, the call timed out, or the node spoke something other
// than RocketMQ remoting. Addr lets a tool say which server did not
// answer; Err is the transport's error (remoting.ErrTimeout,
// protocol.ErrFrameTooLarge, a dial error, ...).
type CallError struct {
	Op   string // what was attempted
	Node string // e.g. "name server 127.0.0.1:9876" or "broker broker-a (10.0.0.1:10911)"
	Addr string // host:port asked
	Err  error
}

func (e *CallError) Error() string { return fmt.Sprintf("admin: %s: %s: %v", e.Op, e.Node, e.Err) }

func (e *CallError) Unwrap() error { return e.Err }

// ResponseError is an answer whose code is not SUCCESS.
type ResponseError struct {
	Op     string // what was attempted, e.g. `create topic "T"`
	Node   string // who answered, e.g. "broker broker-a (10.0.0.1:10911)"
	Code   int16  // the response code
	Remark string // the node's remark
}

func (e *ResponseError) Error() string {
	msg := fmt.Sprintf("admin: %s: %s answered %s (%d)", e.Op, e.Node, protocol.ResponseCodeName(e.Code), e.Code)
	if e.Remark != "" {
		msg += ": " + e.Remark
	}
	return msg
}

// Retriable says whether the request may succeed if sent again, to
// another node or later (remoting/protocol's table of response codes).
func (e *ResponseError) Retriable() bool { return protocol.ResponseCodeOf(e.Code).Retriable }

// Meaning is what the code means, from remoting/protocol's table.
func (e *ResponseError) Meaning() string { return protocol.ResponseCodeOf(e.Code).Meaning }

// Is matches ErrNotFound for TOPIC_NOT_EXIST, QUERY_NOT_FOUND and
// SUBSCRIPTION_GROUP_NOT_EXIST, and ErrUnsupported for
// REQUEST_CODE_NOT_SUPPORTED, and ErrNotOnline for CONSUMER_NOT_ONLINE.
func (e *ResponseError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == protocol.RespTopicNotExist || e.Code == protocol.RespQueryNotFound ||
			e.Code == protocol.RespSubscriptionGroupNotExist
	case ErrUnsupported:
		return e.Code == protocol.RespRequestCodeNotSupported
	case ErrNotOnline:
		return e.Code == protocol.RespConsumerNotOnline
	}
	return false
}

// responseError builds the error for a non-success resp.
func responseError(op, node string, resp *protocol.Command) error {
	return &ResponseError{Op: op, Node: node, Code: resp.Code, Remark: resp.Remark}
}
