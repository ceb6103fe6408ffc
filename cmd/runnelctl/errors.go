package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// friendlyError says in the user's terms what the transport and the
// admin client report in theirs: a timeout names the server that did not
// answer and the time it had; a server that answered something other than
// RocketMQ remoting (an HTTP server on that port, say) is called that.
// Everything else is passed through, without the admin client's package
// prefix on argument errors.
func friendlyError(err error, timeout time.Duration) error {
	var ce *admin.CallError
	if errors.As(err, &ce) {
		switch {
		case errors.Is(ce.Err, remoting.ErrTimeout) || errors.Is(ce.Err, context.DeadlineExceeded):
			return fmt.Errorf("%s: no answer from %s within %v", ce.Op, ce.Node, timeout)
		case errors.Is(ce.Err, protocol.ErrFrameTooLarge) || errors.Is(ce.Err, protocol.ErrFrameTooShort) ||
			errors.Is(ce.Err, protocol.ErrBadHeader):
			return fmt.Errorf("%s: %s is not a RocketMQ name server or broker (it answered in another protocol)", ce.Op, ce.Addr)
		case errors.Is(ce.Err, remoting.ErrConnClosed) && !errors.Is(ce.Err, remoting.ErrClosed):
			// A server with tls.server.mode=enforcing closes plain
			// connections without a word.
			return fmt.Errorf("%w (if it requires TLS, try --tls)", err)
		}
		return err
	}
	if errors.Is(err, admin.ErrBadArgument) {
		return errors.New(strings.TrimPrefix(err.Error(), admin.ErrBadArgument.Error()+": "))
	}
	return err
}
