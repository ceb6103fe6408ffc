package remoting

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by the methods of a Server or Client that has
	// been closed, and fails the calls in flight when it closes.
	ErrClosed = errors.New("remoting: closed")
	// ErrConnClosed is returned when the connection a call or reply needs is
	// closed, or closes while a call waits for its answer. The error names
	// the peer address and wraps the reason the connection closed.
	ErrConnClosed = errors.New("remoting: connection closed")
	// ErrTimeout is matched by the *TimeoutError of a call that gets no
	// answer within its timeout (the context's deadline or the configured
	// call timeout), which also matches context.DeadlineExceeded.
	ErrTimeout = errors.New("remoting: timeout")
	// ErrIdle is the reason recorded when a connection is closed after
	// receiving no frame for the idle timeout.
	ErrIdle = errors.New("remoting: idle timeout")
	// ErrBadConfig is wrapped by configuration errors; the message names the
	// bad field.
	ErrBadConfig = errors.New("remoting: bad config")
	// ErrNotRocketMQ is matched by the error of a connection whose peer's
	// first bytes are not a RocketMQ frame: the address of an HTTP server,
	// say, answering "HTTP/1.1 400 ..." (whose first four bytes read as a
	// frame of 1213486160 bytes). Calls waiting on the connection fail with
	// it (and ErrConnClosed).
	ErrNotRocketMQ = errors.New("remoting: peer does not speak RocketMQ remoting")
)

// notRocketMQError says which peer sent what; it matches ErrNotRocketMQ.
type notRocketMQError struct {
	addr   string
	server bool // the peer is the server (this end dialled it)
	sent   string
	err    error
	// kind is what a client of this server opened with, when it is one
	// foreign.go names; grpcHint is the server's GRPCAddrHint.
	kind     foreignKind
	grpcHint string
}

func (e *notRocketMQError) Error() string {
	if text := foreignText(e.kind, e.addr, e.grpcHint); text != "" {
		return text
	}
	role := "client"
	if e.server {
		role = "server"
	}
	return fmt.Sprintf("remoting: %s is not a RocketMQ %s: it sent %q", e.addr, role, e.sent)
}

func (e *notRocketMQError) Is(target error) bool { return target == ErrNotRocketMQ }

func (e *notRocketMQError) Unwrap() error { return e.err }
