package remoting

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Interceptor hooks into every request a Server serves: before its handler
// (to refuse it, as ACL refuses an unsigned request with NO_PERMISSION) and
// after its answer (to time it, as metrics do). ServerConfig.Interceptors
// chains them; a Server without any pays nothing for the seam.
type Interceptor struct {
	// Request, if set, runs before the handler, in chain order, with the
	// handler's ctx, the connection (its RemoteAddr, ID, Language, values)
	// and the decoded request, which it must not modify; its ExtFields are
	// decoded for it (ACL signs over all of them). Returning nil lets
	// the request through. A non-nil response refuses it: that response is
	// the answer (set its code and remark; the opaque is taken care of), and
	// neither the handler nor later interceptors' Request run. A oneway
	// request refused gets no answer, as a oneway request never does.
	//
	// A panic is answered SYSTEM_ERROR, as a handler's is. Neither hook may
	// keep req, or its Body, past its return: a run's frames are recycled
	// (framepool.go).
	Request Handler
	// Response, if set, runs once the request's answer is settled, in
	// reverse chain order, for each interceptor whose Request ran (every one
	// when the request reached its handler), just before the answer is
	// written, so what it records is there by the time the peer has the
	// answer. resp is the answer: the handler's, a refusal, or what a
	// Responder was given; it is sent unless the request was oneway or the
	// connection has closed. req's ext fields may be undecoded (see
	// protocol.Command): read them with req.Ext, which decodes nothing
	// else and may run beside the handler's reads. resp is nil when there was no answer (a handler
	// returning nil without taking a Responder, as for most oneway
	// requests). elapsed runs from the dispatch of the request to its
	// answer being settled. For a deferred
	// answer it runs on the goroutine that calls Responder.Respond; a
	// Responder never answered never runs it. It must not modify req or
	// resp, nor block.
	Response func(c *Conn, req, resp *protocol.Command, elapsed time.Duration)
	// UndecodedExt says Request reads req's ext fields only with req.Ext
	// and req.RangeExt, so the server need not decode them into
	// req.ExtFields for it (see protocol.Command). Default false: Request
	// sees ExtFields decoded.
	UndecodedExt bool
}

// ClientInterceptor hooks into every request a Client sends on its
// connections: to sign it (ACL adds the AccessKey and Signature ext fields,
// computed over the other ext fields and the body), to time it.
// ClientConfig.Interceptors chains them.
type ClientInterceptor struct {
	// Request, if set, runs in chain order on each outgoing request (Invoke,
	// InvokeAsync, InvokeOneway) before it is encoded, with the peer's
	// address. req is the copy that goes out, with its opaque and flags set
	// and an ExtFields map of its own (a copy of the caller's, never nil),
	// so adding fields touches neither the caller's command nor another
	// send of it. Its Body is the caller's and must not be modified in
	// place (replace it instead). An error fails the call before anything
	// is written; the call returns it and Response does not run.
	Request func(addr string, req *protocol.Command) error
	// Append, if set, runs in chain order with the Request hooks (an
	// interceptor's Request before its Append) and adds ext fields by
	// appending them to req.MoreExt, which is encoded after ExtFields. It
	// must modify nothing else: unless some interceptor has a Request hook,
	// req.ExtFields is the caller's map itself, not a copy, which is what
	// makes Append cheaper (ACL signs every request this way: copying the
	// map was most of a signed send's extra allocation). An error fails the
	// call as Request's does.
	Append func(addr string, req *protocol.Command) error
	// AppendFields is the most fields Append adds (0: unknown). The copy of
	// the caller's MoreExt that Append appends to is made with room for
	// them, so it is allocated once, not grown on the first append.
	AppendFields int
	// Response, if set, runs in reverse chain order with the outcome of an
	// Invoke or InvokeAsync whose request was written (or failed to be):
	// the request as sent, the response or the error, and the time since
	// the Request hooks ran. It runs before the caller sees the result; it
	// does not run for oneway requests. It must not modify req or resp,
	// nor block.
	Response func(addr string, req, resp *protocol.Command, err error, elapsed time.Duration)
}

// served is the interceptors' state of one request a Server serves; it
// exists only when the Server has interceptors.
type served struct {
	ics   []Interceptor
	start time.Time
	// ran is the number of interceptors whose Request ran; written by the
	// serving goroutine before the handler runs.
	ran   int
	later atomic.Pointer[Responder] // set by Conn.Defer in the handler
}

// finish runs the Response hooks of the interceptors whose Request ran.
func (st *served) finish(c *Conn, req, resp *protocol.Command) {
	elapsed := time.Since(st.start)
	for i := st.ran - 1; i >= 0; i-- {
		if fn := st.ics[i].Response; fn != nil {
			fn(c, req, resp, elapsed)
		}
	}
}

// servedKey is the context key under which a request's served is found.
type servedKey struct{}

// requestCtx is the handler context of a request served with interceptors:
// the connection's context, plus the request's served for Conn.Defer. It
// delegates everything else, so contexts derived from it still hang off
// the connection's cancelCtx without a goroutine of their own.
// One allocation holds both.
type requestCtx struct {
	context.Context
	st served
}

func (c *requestCtx) Value(key any) any {
	if key == (servedKey{}) {
		return &c.st
	}
	return c.Context.Value(key)
}

// serveIntercepted serves req through the interceptor chain.
func (s *Server) serveIntercepted(c *Conn, req *protocol.Command) {
	ctx := &requestCtx{Context: c.ctx, st: served{ics: s.cfg.Interceptors, start: time.Now()}}
	st := &ctx.st
	resp := s.intercept(ctx, c, req)
	if resp == nil {
		resp = s.handlers.handle(s.log, ctx, c, req)
	}
	if r := st.later.Load(); r != nil {
		// The handler took a Responder: it answers, and finishes st then.
		// An answer returned as well goes through it, so at most one is sent.
		if resp != nil {
			_ = r.Respond(resp)
		}
		return
	}
	// Response hooks before the write: what they record is there by the
	// time the peer has the answer.
	st.finish(c, req, resp)
	c.answer(req, resp)
}

// intercept runs the Request hooks of ctx's interceptors on req, in chain
// order, and returns the refusal of the first that refuses it, or nil.
func (s *Server) intercept(ctx *requestCtx, c *Conn, req *protocol.Command) (resp *protocol.Command) {
	st := &ctx.st
	for _, ic := range st.ics {
		st.ran++
		if ic.Request == nil {
			continue
		}
		// Only a Request hook needs the map; a server whose interceptors
		// are all Response hooks (metrics) leaves the hot requests' ext
		// fields undecoded.
		if !ic.UndecodedExt {
			req.Fields()
		}
		if resp = callHandler(s.log, ic.Request, ctx, c, req); resp != nil {
			return resp
		}
	}
	return nil
}

// outgoing runs the client interceptors' Request and Append hooks on cmd,
// the copy of a request about to be sent, giving it an ExtFields map of
// its own first if a Request hook may write to it.
func (c *Conn) outgoing(cmd *protocol.Command) error {
	switch {
	case c.outWrites:
		// The caller's MoreExt goes into the copy (a header sent as a field
		// list, as our client's sends), so a Request hook sees every field;
		// with room for what interceptors add: a clone of a full table
		// would grow, and rehash, on the first of them.
		ext := make(map[string]string, len(cmd.ExtFields)+len(cmd.MoreExt)+4)
		for k, v := range cmd.ExtFields {
			ext[k] = v
		}
		for _, f := range cmd.MoreExt {
			ext[f.Key] = f.Value
		}
		cmd.ExtFields, cmd.MoreExt = ext, nil
	case c.outFields > 0:
		// Appends go into a copy of the caller's array, made once with
		// room for what the Append hooks declare.
		cmd.MoreExt = append(make([]protocol.Field, 0, len(cmd.MoreExt)+c.outFields), cmd.MoreExt...)
	default:
		// Appends must not write into the caller's array.
		cmd.MoreExt = slices.Clip(cmd.MoreExt)
	}
	for _, ic := range c.out {
		if ic.Request != nil {
			if err := ic.Request(c.remote, cmd); err != nil {
				return err
			}
		}
		if ic.Append != nil {
			if err := ic.Append(c.remote, cmd); err != nil {
				return err
			}
		}
	}
	return nil
}

// setOut makes ics the connection's client interceptors.
func (c *Conn) setOut(ics []ClientInterceptor) {
	if len(ics) == 0 {
		return
	}
	c.out = ics
	for _, ic := range ics {
		c.outWrites = c.outWrites || ic.Request != nil
		c.outFields += ic.AppendFields
	}
}

// observe runs the client interceptors' Response hooks.
func (c *Conn) observe(cmd, resp *protocol.Command, err error, start time.Time) {
	elapsed := time.Since(start)
	for i := len(c.out) - 1; i >= 0; i-- {
		if fn := c.out[i].Response; fn != nil {
			fn(c.remote, cmd, resp, err, elapsed)
		}
	}
}

// answer sends resp, the answer to req, unless req is oneway or resp nil.
func (c *Conn) answer(req, resp *protocol.Command) {
	if resp == nil || req.IsOneway() {
		return
	}
	resp.Opaque = req.Opaque
	if err := c.Reply(resp); err != nil {
		c.log.Debug("remoting: response not sent", "code", req.Code, "opaque", req.Opaque, "err", err)
	}
}
