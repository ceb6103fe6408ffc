package remoting

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// RunHandler serves a run: requests of one connection that arrived
// together (decoded from one read) and that it can serve better together
// than one by one, as the broker stores concurrent sends with one write.
// It sets resps[i] to the answer of reqs[i] (nil for none: a oneway
// request gets no answer whatever it is set to); resps is as long as reqs
// and all nil on entry. It must answer through resps alone, never through
// a Responder (Conn.Defer), and it must not keep reqs or resps, nor any
// part of them (a body, an ext value's bytes) past its return: the frames
// they were decoded from are recycled (framepool.go).
//
// ctx is the connection's, cancelled when it closes.
type RunHandler func(ctx context.Context, conn *Conn, reqs, resps []*protocol.Command)

// maxRun and maxRunBytes bound one run: a read of 64 KiB holds at most a
// few hundred small frames, but a stream of large ones would otherwise
// make one store write of all of them. A run is cut before a request that
// would take its bodies over maxRunBytes (a request larger than that is a
// run of its own), as the replicated group caps a combined entry.
const (
	maxRun      = 64
	maxRunBytes = 4 << 20
)

// runTable is a Server's run handler and the codes it serves.
type runTable struct {
	codes map[int16]bool
	h     RunHandler
}

// HandleRun registers h for runs of requests with any of codes: two or
// more such requests decoded from one read of a connection are handed to
// h together, on one worker, and their answers are written with one write,
// instead of each going to its own worker and being answered alone. A
// lone request, and requests of other codes, still go to their Handler
// (Handle), which must be registered for the same codes: a run handler
// serves what a Handler would, only several at a time.
//
// With interceptors, each request of a run goes through the Request hooks
// on its own (a refused one is answered with its refusal and is not in
// what h gets) and the Response hooks after h returns. A nil h (or no
// codes) turns runs off; a run collected before that is served by the
// Handlers, one request after another.
func (s *Server) HandleRun(codes []int16, h RunHandler) {
	if h == nil || len(codes) == 0 {
		s.runs.Store(nil)
		return
	}
	rt := &runTable{codes: make(map[int16]bool, len(codes)), h: h}
	for _, c := range codes {
		rt.codes[c] = true
	}
	s.runs.Store(rt)
}

// runnable implements runOwner.
func (s *Server) runnable(code int16) bool {
	rt := s.runs.Load()
	return rt != nil && rt.codes[code]
}

// dispatchRun implements runOwner: a run goes to one worker.
func (s *Server) dispatchRun(c *Conn, reqs []*protocol.Command, frames [][]byte) bool {
	return s.workers.run(task{c: c, run: reqs, frames: frames})
}

// serveRun implements runOwner.
func (s *Server) serveRun(c *Conn, reqs []*protocol.Command) bool {
	rt := s.runs.Load()
	if rt == nil { // turned off since the run was collected
		for _, req := range reqs {
			s.serveRequest(c, req)
		}
		return false
	}
	resps := make([]*protocol.Command, len(reqs))
	if len(s.cfg.Interceptors) == 0 {
		s.callRun(rt.h, c, reqs, resps)
		return c.answerAll(reqs, resps)
	}
	ctxs := make([]requestCtx, len(reqs))
	passed := make([]*protocol.Command, 0, len(reqs))
	at := make([]int, 0, len(reqs)) // where each of passed is in reqs
	now := time.Now()
	for i, req := range reqs {
		ctx := &ctxs[i]
		*ctx = requestCtx{Context: c.ctx, st: served{ics: s.cfg.Interceptors, start: now}}
		if resps[i] = s.intercept(ctx, c, req); resps[i] == nil {
			passed, at = append(passed, req), append(at, i)
		}
	}
	if len(passed) > 0 {
		out := make([]*protocol.Command, len(passed))
		s.callRun(rt.h, c, passed, out)
		for k, i := range at {
			resps[i] = out[k]
		}
	}
	for i, req := range reqs {
		ctxs[i].st.finish(c, req, resps[i])
	}
	return c.answerAll(reqs, resps)
}

// callRun runs h, turning a panic into a SYSTEM_ERROR answer to every
// request of the run, as callHandler does for one.
func (s *Server) callRun(h RunHandler, c *Conn, reqs, resps []*protocol.Command) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("remoting: run handler panicked", "requests", len(reqs), "remote", c.remote, "panic", p, "stack", string(debug.Stack()))
			for i, req := range reqs {
				resps[i] = protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("remoting: handler for code %d panicked: %v", req.Code, p))
			}
		}
	}()
	h(c.ctx, c, reqs, resps)
}

// collect takes a decoded request of a runnable code into the
// connection's run, dispatching the run once it is full. Only the reading
// goroutine calls it.
func (c *Conn) collect(req *protocol.Command, frame []byte) {
	if len(c.run) > 0 && c.runBytes+len(req.Body) > maxRunBytes {
		c.flushRun()
	}
	if c.run == nil {
		c.run = make([]*protocol.Command, 0, 16) // the last was handed over: room for a wave without regrowing
	}
	c.run = append(c.run, req)
	if pooledFrame(frame) {
		if c.runFrames == nil {
			c.runFrames = make([][]byte, 0, 16)
		}
		c.runFrames = append(c.runFrames, frame)
	}
	c.runBytes += len(req.Body)
	if len(c.run) >= maxRun {
		c.flushRun()
	}
}

// flushRun dispatches what the connection's run holds: a lone request as
// any other, two or more together. Called by the reading goroutine once a
// read's frames are all decoded.
func (c *Conn) flushRun() {
	c.runBytes = 0
	switch n := len(c.run); n {
	case 0:
		return
	case 1:
		// A lone request's handler may keep it: its frame is the
		// collector's.
		req := c.run[0]
		c.run[0] = nil
		c.run = c.run[:0]
		clear(c.runFrames)
		c.runFrames = c.runFrames[:0]
		if !c.owner.dispatch(c, req) {
			c.serving.Add(-1)
		}
	default:
		reqs, frames := c.run, c.runFrames
		c.run, c.runFrames = nil, nil // handed over with the run
		if !c.runs.dispatchRun(c, reqs, frames) {
			c.serving.Add(-int32(n))
		}
	}
}

// serveRun handles a run that flushRun dispatched, and gives its frames
// back when its owner kept nothing of them (framepool.go).
func (c *Conn) serveRun(reqs []*protocol.Command, frames [][]byte) {
	if c.runs.serveRun(c, reqs) {
		for _, f := range frames {
			putFrame(f)
		}
	}
	c.serving.Add(-int32(len(reqs)))
}

// answerAll sends the answers of a run with one write: resps[i] answers
// reqs[i]; nil ones and those of oneway requests are not sent. It reports
// whether no answer had a body: one may be a request's (an echo), and a
// body the write borrows (minBorrowedBody) is read after sendAll returns,
// so the run's frames are then left to the collector.
func (c *Conn) answerAll(reqs, resps []*protocol.Command) bool {
	out := resps[:0] // the answers to send, in place
	bodiless := true
	for i, resp := range resps {
		if resp == nil || reqs[i].IsOneway() {
			continue
		}
		if len(resp.Body) > 0 {
			bodiless = false
		}
		resp.Opaque = reqs[i].Opaque
		resp.Flag |= protocol.FlagResponse
		out = append(out, resp)
	}
	if len(out) == 0 {
		return bodiless
	}
	if err := c.sendAll(out); err != nil {
		c.log.Debug("remoting: responses not sent", "count", len(out), "err", err)
	}
	return bodiless
}
