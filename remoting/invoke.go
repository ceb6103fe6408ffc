package remoting

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// call is one outstanding request awaiting its response. Whoever removes it
// from the connection's table completes it, so it completes exactly once.
type call struct {
	done chan struct{} // closed on completion (synchronous calls)
	resp *protocol.Command
	err  error
	cb   func(*protocol.Command, error) // set for asynchronous calls
	stop func() bool                    // stops the async call's timer and context watch
}

// Invoke sends req to the peer and waits for the response, which is matched
// by opaque. It sends a shallow copy of req with a fresh opaque, so req is
// not modified. It fails with ErrTimeout when ctx's deadline passes (or,
// when ctx has none, the configured call timeout), with ctx's error when ctx
// is cancelled, and with ErrConnClosed when the connection closes first.
func (c *Conn) Invoke(ctx context.Context, req *protocol.Command) (*protocol.Command, error) {
	cmd, err := c.prepare(req)
	if err != nil {
		return nil, err
	}
	cl := &call{done: make(chan struct{})}
	if err := c.register(cmd.Opaque, cl); err != nil {
		return nil, err
	}
	if err := c.send(cmd, true); err != nil {
		if c.unregister(cmd.Opaque) {
			return nil, err
		}
		<-cl.done
		return cl.resp, cl.err
	}

	var timeout <-chan time.Time
	if _, ok := ctx.Deadline(); !ok {
		t := time.NewTimer(c.callTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-cl.done:
		return cl.resp, cl.err
	case <-ctx.Done():
		if c.unregister(cmd.Opaque) {
			return nil, c.ctxError(ctx, cmd)
		}
	case <-timeout:
		if c.unregister(cmd.Opaque) {
			return nil, c.timeoutError(cmd)
		}
	}
	// The response or the close won the race and is completing the call.
	<-cl.done
	return cl.resp, cl.err
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
	cl := &call{cb: cb}
	expire := func(err error) {
		if c.unregister(cmd.Opaque) {
			c.finish(cl, nil, err)
		}
	}
	// The timer and the context watch are armed before the call is
	// registered, so cl.stop is set before anyone can finish the call; one
	// that fires before registration is caught by the checks after it.
	var (
		t        *time.Timer
		timedOut atomic.Bool
	)
	if _, ok := ctx.Deadline(); !ok {
		t = time.AfterFunc(c.callTimeout, func() {
			timedOut.Store(true)
			expire(c.timeoutError(cmd))
		})
	}
	stopCtx := context.AfterFunc(ctx, func() { expire(c.ctxError(ctx, cmd)) })
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
		expire(c.ctxError(ctx, cmd))
		return nil
	}
	if timedOut.Load() {
		expire(c.timeoutError(cmd))
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
	return c.send(&cmd, true)
}

func (c *Conn) prepare(req *protocol.Command) (*protocol.Command, error) {
	if req == nil {
		return nil, errors.New("remoting: Invoke of a nil command")
	}
	cmd := *req
	cmd.Opaque = protocol.NextOpaque()
	cmd.Flag &^= protocol.FlagResponse | protocol.FlagOneway
	return &cmd, nil
}

// timeoutError is the error of a call that outlived the call timeout. It is
// built only when a call times out: formatting it up front cost every call
// its allocations.
func (c *Conn) timeoutError(cmd *protocol.Command) error {
	return fmt.Errorf("%w: code %d to %s after %v", ErrTimeout, cmd.Code, c.remote, c.callTimeout)
}

func (c *Conn) ctxError(ctx context.Context, cmd *protocol.Command) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: code %d to %s: %w", ErrTimeout, cmd.Code, c.remote, err)
	}
	return fmt.Errorf("remoting: code %d to %s: %w", cmd.Code, c.remote, err)
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
	if cl.cb == nil {
		cl.resp, cl.err = resp, err
		close(cl.done)
		return
	}
	if cl.stop != nil {
		cl.stop()
	}
	if !c.owner.spawn(func() { cl.cb(resp, err) }) {
		cl.cb(resp, err)
	}
}
