package remoting

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// call is one outstanding request awaiting its response. Whoever removes it
// from the connection's table completes it, so it completes exactly once.
type call struct {
	done chan struct{} // signalled once on completion (synchronous calls)
	resp *protocol.Command
	err  error
	cb   func(*protocol.Command, error) // set for asynchronous calls
	stop func() bool                    // stops the async call's timer and context watch
	// raw leaves the answer's ext fields undecoded (CallOptions.RawAnswer).
	raw bool
	// timer bounds a pooled synchronous call's wait; it is stopped when
	// the call goes back to the pool.
	timer *time.Timer
}

// syncCalls pools synchronous calls with their done channel and timer: a
// producer's send made three allocations for them (the call, its channel,
// a timer or a context's), of the ~25 its send and answer cost our client.
// A call goes back only when its waiter has taken the completion or owns
// it (the call left the table by its hand), so nobody signals a pooled
// call.
var syncCalls = sync.Pool{New: func() any {
	return &call{done: make(chan struct{}, 1)}
}}

func getSyncCall(raw bool) *call {
	cl := syncCalls.Get().(*call)
	cl.raw = raw
	return cl
}

// arm starts the call's timer for wait, reusing a pooled call's, and
// returns its channel. An expiry of the timer's last use that nobody read
// is not delivered: Reset discards it (Go 1.23 timers, go.mod's go line).
func (cl *call) arm(wait time.Duration) <-chan time.Time {
	if cl.timer == nil {
		cl.timer = time.NewTimer(wait)
	} else {
		cl.timer.Reset(wait)
	}
	return cl.timer.C
}

func putSyncCall(cl *call) {
	if cl.timer != nil {
		cl.timer.Stop()
	}
	cl.resp, cl.err = nil, nil
	syncCalls.Put(cl)
}

// CallOptions are a synchronous call's options beyond Invoke's.
type CallOptions struct {
	// Timeout bounds the wait for the answer; 0 means the connection's
	// CallTimeout. A ctx deadline that comes first still ends the call.
	// Unlike a ctx made with context.WithTimeout for each call, it costs
	// the call no allocation.
	Timeout time.Duration
	// RawAnswer leaves the answer's ext fields undecoded, as a send's or a
	// pull's request arrives at a server: the caller reads them with a
	// typed header's DecodeCommand, Command.Ext or Command.Fields, never
	// through ExtFields (nil meanwhile). A send's answer then builds no
	// map.
	RawAnswer bool
	// Give hands req over to the call: its opaque and flags are set in
	// place and it is sent as it is, where Invoke sends a copy so as not to
	// modify the caller's command. The caller must not use req during the
	// call, nor send it again after (a retry builds a new one). One
	// allocation a call fewer.
	Give bool
}

// Invoke sends req to the peer and waits for the response, which is matched
// by opaque. It sends a shallow copy of req with a fresh opaque, so req is
// not modified. It fails with a *TimeoutError (matching ErrTimeout and
// context.DeadlineExceeded) when ctx's deadline passes (or, when ctx has
// none, the configured call timeout), with ctx's error when ctx is
// cancelled, and with ErrConnClosed when the connection closes first.
func (c *Conn) Invoke(ctx context.Context, req *protocol.Command) (*protocol.Command, error) {
	return c.InvokeWith(ctx, req, CallOptions{})
}

// InvokeWith is Invoke with opts.
func (c *Conn) InvokeWith(ctx context.Context, req *protocol.Command, opts CallOptions) (*protocol.Command, error) {
	cmd, err := c.prepareGiven(req, opts.Give)
	if err != nil {
		return nil, err
	}
	if c.out == nil {
		return c.invoke(ctx, cmd, opts)
	}
	start := time.Now()
	resp, err := c.invoke(ctx, cmd, opts)
	c.observe(cmd, resp, err, start)
	return resp, err
}

func (c *Conn) invoke(ctx context.Context, cmd *protocol.Command, opts CallOptions) (*protocol.Command, error) {
	cl := getSyncCall(opts.RawAnswer)
	if err := c.register(cmd.Opaque, cl); err != nil {
		putSyncCall(cl)
		return nil, err
	}
	// The wait is bounded by ctx's deadline when it comes first, else by
	// the call's own timeout.
	wait := opts.Timeout
	if wait <= 0 {
		wait = c.callTimeout
	}
	var start time.Time // for the error of a context deadline
	ctxFirst := false
	if dl, ok := ctx.Deadline(); ok {
		start = time.Now()
		ctxFirst = dl.Sub(start) <= wait
	}
	if err := c.send(cmd, true); err != nil {
		if c.unregister(cmd.Opaque) {
			putSyncCall(cl)
			return nil, err
		}
		return c.taken(cl)
	}

	var timeout <-chan time.Time
	if !ctxFirst {
		timeout = cl.arm(wait)
	}
	select {
	case <-cl.done:
		resp, err := cl.resp, cl.err
		putSyncCall(cl)
		return resp, err
	case <-ctx.Done():
		if c.unregister(cmd.Opaque) {
			putSyncCall(cl)
			return nil, c.ctxError(ctx, cmd, start)
		}
	case <-timeout:
		if c.unregister(cmd.Opaque) {
			putSyncCall(cl)
			return nil, c.timeoutError(cmd, wait)
		}
	}
	// The response or the close won the race and is completing the call.
	return c.taken(cl)
}

// taken waits for the completion of a call that someone else took out of
// the table, and returns it.
func (c *Conn) taken(cl *call) (*protocol.Command, error) {
	<-cl.done
	resp, err := cl.resp, cl.err
	putSyncCall(cl)
	return resp, err
}

// InvokeAsync sends req like Invoke and returns once it is written; cb runs
// exactly once, in its own goroutine, with the response or the error. The
// timeout and cancellation rules are Invoke's.
func (c *Conn) InvokeAsync(ctx context.Context, req *protocol.Command, cb func(*protocol.Command, error)) error {
	if cb == nil {
		return errors.New("remoting: InvokeAsync with a nil callback")
	}
	cmd, err := c.prepare(req)
	if err != nil {
		return err
	}
	if c.out != nil {
		start, inner := time.Now(), cb
		cb = func(resp *protocol.Command, err error) {
			c.observe(cmd, resp, err, start)
			inner(resp, err)
		}
	}
	cl := &call{cb: cb}
	expire := func(err error) {
		if c.unregister(cmd.Opaque) {
			c.finish(cl, nil, err)
		}
	}
	var start time.Time // for the error of a context deadline
	if _, ok := ctx.Deadline(); ok {
		start = time.Now()
	}
	// The timer and the context watch are armed before the call is
	// registered, so cl.stop is set before anyone can finish the call; one
	// that fires before registration is caught by the checks after it.
	var (
		t        *time.Timer
		timedOut atomic.Bool
	)
	if start.IsZero() {
		t = time.AfterFunc(c.callTimeout, func() {
			timedOut.Store(true)
			expire(c.timeoutError(cmd, c.callTimeout))
		})
	}
	stopCtx := context.AfterFunc(ctx, func() { expire(c.ctxError(ctx, cmd, start)) })
	cl.stop = func() bool {
		if t != nil {
			t.Stop()
		}
		return stopCtx()
	}
	if err := c.register(cmd.Opaque, cl); err != nil {
		cl.stop()
		return err
	}
	if ctx.Err() != nil {
		expire(c.ctxError(ctx, cmd, start))
		return nil
	}
	if timedOut.Load() {
		expire(c.timeoutError(cmd, c.callTimeout))
		return nil
	}
	if err := c.send(cmd, true); err != nil {
		if c.unregister(cmd.Opaque) {
			cl.stop()
			return err
		}
		// The connection closed and is failing the call through cb.
	}
	return nil
}

// InvokeOneway sends req with FlagOneway set and does not wait for anything.
// req is not modified.
func (c *Conn) InvokeOneway(req *protocol.Command) error {
	if req == nil {
		return errors.New("remoting: InvokeOneway of a nil command")
	}
	cmd := *req
	cmd.Flag = (cmd.Flag | protocol.FlagOneway) &^ protocol.FlagResponse
	if c.out != nil {
		if err := c.outgoing(&cmd); err != nil {
			return err
		}
	}
	return c.send(&cmd, true)
}

func (c *Conn) prepare(req *protocol.Command) (*protocol.Command, error) {
	return c.prepareGiven(req, false)
}

// prepareGiven is prepare of req itself when given (CallOptions.Give),
// else of a copy.
func (c *Conn) prepareGiven(req *protocol.Command, given bool) (*protocol.Command, error) {
	if req == nil {
		return nil, errors.New("remoting: Invoke of a nil command")
	}
	cmd := req
	if !given {
		cp := *req
		cmd = &cp
	}
	cmd.Opaque = protocol.NextOpaque()
	cmd.Flag &^= protocol.FlagResponse | protocol.FlagOneway
	if c.out != nil {
		if err := c.outgoing(cmd); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}

// TimeoutError is the error of a call that got no answer in time. It
// matches ErrTimeout and context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	Addr  string        // the peer
	Code  int16         // the request's code
	After time.Duration // how long the call waited
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("remoting: no answer from %s within %v (request %s)", e.Addr, e.After, protocol.RequestCodeName(e.Code))
}

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// timeoutError is the error of a call that waited d for its answer. It is
// built only when a call times out: formatting it up front cost every call
// its allocations.
func (c *Conn) timeoutError(cmd *protocol.Command, d time.Duration) error {
	return &TimeoutError{Addr: c.remote, Code: cmd.Code, After: d}
}

// ctxError is the error of a call whose ctx ended; start is when it was
// sent (set when ctx has a deadline).
func (c *Conn) ctxError(ctx context.Context, cmd *protocol.Command, start time.Time) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		d := time.Duration(0)
		if !start.IsZero() {
			d = time.Since(start).Round(time.Millisecond)
		}
		return c.timeoutError(cmd, d)
	}
	return fmt.Errorf("remoting: request %s to %s: %w", protocol.RequestCodeName(cmd.Code), c.remote, err)
}

func (c *Conn) register(opaque int32, cl *call) error {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.pmu.calls == nil {
		return fmt.Errorf("%w: %s: %w", ErrConnClosed, c.remote, c.reasonLocked())
	}
	if _, dup := c.pmu.calls[opaque]; dup {
		// Opaques come from one process-wide counter; a clash means it
		// wrapped around while a call was outstanding for 2^32 calls.
		return fmt.Errorf("remoting: opaque %d already in flight to %s", opaque, c.remote)
	}
	c.pmu.calls[opaque] = cl
	return nil
}

// reasonLocked returns the close reason; pmu.calls == nil implies closeWith
// recorded it.
func (c *Conn) reasonLocked() error {
	<-c.closed
	return c.reason
}

// unregister removes the call for opaque and reports whether it was there,
// that is, whether the caller now owns its completion.
func (c *Conn) unregister(opaque int32) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if _, ok := c.pmu.calls[opaque]; !ok {
		return false
	}
	delete(c.pmu.calls, opaque)
	return true
}

// complete delivers a response to the call waiting for it.
func (c *Conn) complete(resp *protocol.Command) {
	c.pmu.Lock()
	cl, ok := c.pmu.calls[resp.Opaque]
	if ok {
		delete(c.pmu.calls, resp.Opaque)
	}
	c.pmu.Unlock()
	if !ok {
		c.log.Debug("remoting: response for no pending call (timed out?)", "opaque", resp.Opaque, "code", resp.Code)
		return
	}
	c.finish(cl, resp, nil)
}

func (c *Conn) finish(cl *call, resp *protocol.Command, err error) {
	if resp != nil && !cl.raw {
		// Decoded for every caller that did not ask for the raw answer
		// (CallOptions.RawAnswer): a client's connection leaves every
		// answer's ext fields undecoded until it knows whose it is.
		resp.Fields()
	}
	if cl.cb == nil {
		cl.resp, cl.err = resp, err
		cl.done <- struct{}{}
		return
	}
	if cl.stop != nil {
		cl.stop()
	}
	if !c.owner.spawn(func() { cl.cb(resp, err) }) {
		cl.cb(resp, err)
	}
}
