package remoting

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// ErrAnswered is returned by Responder.Respond for a request already
// answered.
var ErrAnswered = errors.New("remoting: request already answered")

// Responder answers one request later than its handler returns: a held
// long-polled pull, a request forwarded to another peer. It owns what a
// deferred answer must get right, so its users need not: the request's
// opaque, the oneway flag (answering a oneway request sends nothing), at
// most one answer, skipping a connection that has closed, and the
// interceptors' Response hooks. A write to a connection the peer has just
// closed fails like any write (see Conn.send); it never panics.
//
// Its methods are safe for concurrent use.
type Responder struct {
	c    *Conn
	req  *protocol.Command
	st   *served // nil when the server has no interceptors
	done atomic.Bool
}

// Defer takes the answer to req, a request being served on c, out of its
// handler's hands: the handler returns nil (or the answer, which then goes
// through the Responder) and answers later with the Responder's Respond,
// from any goroutine. ctx is the handler's; call Defer in the handler,
// before it returns.
func (c *Conn) Defer(ctx context.Context, req *protocol.Command) *Responder {
	r := &Responder{c: c, req: req}
	if st, ok := ctx.Value(servedKey{}).(*served); ok {
		r.st = st
		st.later.Store(r)
	}
	return r
}

// Conn returns the connection the request came on.
func (r *Responder) Conn() *Conn { return r.c }

// Request returns the request being answered.
func (r *Responder) Request() *protocol.Command { return r.req }

// Oneway reports whether the request wants no answer, so Respond sends
// nothing.
func (r *Responder) Oneway() bool { return r.req.IsOneway() }

// Respond sends resp as the answer to the request, setting its opaque and
// FlagResponse. Only the first call answers: later ones return ErrAnswered.
// For a oneway request it sends nothing and returns nil. When the
// connection has closed it sends nothing and returns an error wrapping
// ErrConnClosed; a nil error means the answer was written or queued.
func (r *Responder) Respond(resp *protocol.Command) error {
	if resp == nil {
		return errors.New("remoting: Respond with a nil command")
	}
	if !r.done.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: code %d opaque %d from %s", ErrAnswered, r.req.Code, r.req.Opaque, r.c.remote)
	}
	// The interceptors see the answer before it is written, so whatever
	// they record (metrics) is there by the time the peer has the answer.
	if r.st != nil {
		r.st.finish(r.c, r.req, resp)
	}
	var err error
	switch {
	case r.req.IsOneway():
	case r.c.Err() != nil:
		err = fmt.Errorf("%w: %s: %w", ErrConnClosed, r.c.remote, r.c.Err())
	default:
		resp.Opaque = r.req.Opaque
		err = r.c.Reply(resp)
	}
	if err != nil {
		r.c.log.Debug("remoting: deferred answer not sent", "code", r.req.Code, "opaque", r.req.Opaque, "err", err)
	}
	return err
}
