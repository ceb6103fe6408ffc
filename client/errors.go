package client

import (
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The client's sentinels; remoting's and client/admin's look the same but
// are theirs, each with its own prefix and meanings.
var (
	// ErrBadConfig is wrapped by configuration errors; the message names the
	// field.
	ErrBadConfig = errors.New("client: bad config")
	// ErrNotStarted is returned by calls on a producer or consumer that has
	// not been started.
	ErrNotStarted = errors.New("client: not started")
	// ErrClosed is returned by calls on a producer or consumer after
	// Shutdown.
	ErrClosed = errors.New("client: shut down")
	// ErrTopicNotExist means no name server knows the topic (and, for a
	// producer, no broker advertises the auto-create topic TBW102 either).
	ErrTopicNotExist = errors.New("client: topic does not exist")
	// ErrNoBroker means the route names a broker whose master address is
	// unknown.
	ErrNoBroker = errors.New("client: broker address unknown")
	// ErrBadMessage is wrapped when a message cannot be sent as given; the
	// message says why.
	ErrBadMessage = errors.New("client: bad message")
	// ErrNameServer means no name server answered.
	ErrNameServer = errors.New("client: no name server answered")
	// ErrBadRecallHandle is wrapped by a Recall whose handle does not
	// parse. It is the handle codec's own sentinel
	// (message.ErrBadRecallHandle), so its text says "message:".
	ErrBadRecallHandle = message.ErrBadRecallHandle
)

// BrokerError is a non-success answer from a broker or name server: which
// request, where, and the code and remark the server gave, e.g.
//
//	client: send to broker-a (127.0.0.1:10911): CODE 17 TOPIC_NOT_EXIST: topic not exist
type BrokerError struct {
	Op     string // what was attempted: "send", "pull", "query offset", ...
	Broker string // broker name, or "name server"
	Addr   string // the address the request went to
	Code   int16
	Remark string
}

// Error names the code as Java does (TOPIC_NOT_EXIST), which says more to
// a person than its number, and keeps the number for searching.
func (e *BrokerError) Error() string {
	return fmt.Sprintf("client: %s to %s (%s): CODE %d %s: %s", e.Op, e.Broker, e.Addr, e.Code, protocol.ResponseCodeName(e.Code), e.Remark)
}

// Retriable says whether the request may succeed if sent again, to
// another broker or later (remoting/protocol's table of response codes).
func (e *BrokerError) Retriable() bool { return protocol.ResponseCodeOf(e.Code).Retriable }

// Is lets errors.Is(err, ErrTopicNotExist) match a TOPIC_NOT_EXIST answer.
func (e *BrokerError) Is(target error) bool {
	return target == ErrTopicNotExist && e.Code == protocol.RespTopicNotExist
}

// transportError wraps a transport failure with what was attempted and
// where.
func transportError(op, broker, addr string, err error) error {
	return fmt.Errorf("client: %s to %s (%s): %w", op, broker, addr, err)
}

// brokerError builds the error for a response with an unexpected code.
func brokerError(op, broker, addr string, resp *protocol.Command) error {
	return &BrokerError{Op: op, Broker: broker, Addr: addr, Code: resp.Code, Remark: resp.Remark}
}
