package remoting

import "errors"

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
)
