package remoting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// transport is the byte pipe under a Conn: a netpoll connection or a
// net.Conn.
type transport interface {
	// write sends all of bufs, in order, or fails. Conn calls it from one
	// goroutine at a time and does not touch bufs until it returns; write
	// may change the slice bufs (not the bytes it refers to).
	write(bufs [][]byte) error
	// close closes the pipe; it may be called more than once.
	close() error
}

// connOwner is the Server or Client a Conn belongs to.
type connOwner interface {
	// spawn runs fn in a goroutine the owner waits for on Close, or returns
	// false without running it when the owner is closing.
	spawn(fn func()) bool
	// dispatch calls c.serve(req) on a goroutine the owner waits for on
	// Close, never behind another request, or returns false without calling
	// it when the owner is closing.
	dispatch(c *Conn, req *protocol.Command) bool
	// serveRequest handles one inbound request; it runs in a dispatched
	// goroutine.
	serveRequest(c *Conn, req *protocol.Command)
	// connClosed runs once, after c is closed.
	connClosed(c *Conn, reason error)
}

// runOwner is a connOwner that serves runs (run.go): a Server. A Client
// serves no runs, so its connections dispatch every request alone.
type runOwner interface {
	// runnable says whether requests of code are collected into runs
	// rather than dispatched one by one.
	runnable(code int16) bool
	// dispatchRun calls c.serveRun(reqs, frames) as dispatch calls
	// c.serve.
	dispatchRun(c *Conn, reqs []*protocol.Command, frames [][]byte) bool
	// serveRun handles a run; it runs in a dispatched goroutine. It
	// reports whether the run's frames may be recycled: nothing of the
	// requests is kept (a run handler served it, and no answer carries a
	// body).
	serveRun(c *Conn, reqs []*protocol.Command) bool
}

// maxKeptWriteBuf is the largest write buffer a server's Conn keeps between
// writes, so one large frame does not pin megabytes per idle connection.
const maxKeptWriteBuf = 256 << 10

// clientKeptWriteBuf is a client Conn's: its requests carry their bodies in
// the write buffer (the caller may reuse a body once Invoke returns, even
// with the frame still queued), and 16 senders of 32-message batches queue
// about 530 KB behind one write. Dropped above 256 KiB, the buffer was
// regrown by appends on most writes: batch sends at 0.82x the msg/s
// (bench/, the runnel-batch row, 3 pairs). A client has a connection per
// broker, a server one per client; a server's answers of 4 KiB or more are
// written from where they lie, so its buffers stay small anyway.
const clientKeptWriteBuf = 1 << 20

// minBorrowedBody is the smallest response body a Conn writes from where it
// lies instead of copying it into the write buffer (a pull's answer: 32
// stored messages, tens of KiB). Smaller ones are cheaper to copy than to
// give a vector entry of their own, and netpoll copies writes up to 4 KiB
// anyway.
const minBorrowedBody = 4 << 10

// borrowedBody is a response body that follows buf[:at] of a write buffer;
// release, if set, is called once it has been written.
type borrowedBody struct {
	at      int
	body    []byte
	release func()
}

var connIDs atomic.Uint64

// Conn is one connection, accepted by a Server or dialled by a Client. All
// its methods are safe for concurrent use.
type Conn struct {
	id          uint64
	remote      string
	local       string
	tr          transport
	owner       connOwner
	runs        runOwner // owner, when it serves runs; else nil
	log         *slog.Logger
	callTimeout time.Duration
	// out are the client interceptors of a Client's connection; nil on a
	// Server's.
	out []ClientInterceptor
	// outWrites is whether one of out has a Request hook, which gets a
	// copy of a request's ext fields to write to.
	outWrites bool
	// outFields is the most fields out's Append hooks add.
	outFields int
	// keptWriteBuf is the largest write buffer kept between writes
	// (maxKeptWriteBuf, or clientKeptWriteBuf on a Client's connection).
	keptWriteBuf int

	// ctx is handed to handlers of this connection's requests; it is
	// cancelled when the connection closes.
	ctx    context.Context
	cancel context.CancelFunc

	// lastRead is the UnixNano time the last complete frame arrived.
	lastRead atomic.Int64

	// serving counts this connection's requests dispatched to a handler
	// goroutine whose handler has not returned yet. A reply sent while
	// others are being served yields so they can join its write.
	serving atomic.Int32

	wmu struct {
		sync.Mutex
		buf   []byte // frames waiting for the writer
		spare []byte // the buffer being written, reused next round
		// bodies are large response bodies to be written from where they
		// lie, each after its frame's head in buf; sparebodies and vec
		// are reused by the writer.
		bodies, sparebodies []borrowedBody
		vec                 [][]byte
		flushing            bool  // a goroutine is writing; others only append
		err                 error // set once the connection is closed
	}

	pmu struct {
		sync.Mutex
		calls map[int32]*call // outstanding Invokes by opaque; nil once closed
	}

	closing atomic.Bool
	closed  chan struct{}
	reason  error // why it closed; written before closed is closed

	values sync.Map

	// peer is what the peer's first request said of it (a client's
	// language and version); peerSet is stored after it is written.
	peerSet atomic.Bool
	peerMu  sync.Mutex
	peer    struct {
		language string
		version  int16
	}

	in frameSplitter
	// limits bound the headers of the requests this end accepts.
	limits protocol.Limits
	// gotFrame is set once a frame has arrived; a stream that breaks before
	// is not RocketMQ at all. Only the reading goroutine touches it.
	gotFrame bool
	// run holds the runnable requests decoded from the read being fed,
	// dispatched together once it is (run.go). Only the reading goroutine
	// touches it.
	run []*protocol.Command
	// runFrames are the frames of run's requests that came from the frame
	// pools, given back when the run has been served (framepool.go).
	runFrames [][]byte
	// runBytes is the bodies' size in run.
	runBytes int
}

func newConn(owner connOwner, tr transport, remote, local string, maxFrame int, callTimeout time.Duration, log *slog.Logger) *Conn {
	c := &Conn{
		id:           connIDs.Add(1),
		remote:       remote,
		local:        local,
		tr:           tr,
		owner:        owner,
		callTimeout:  callTimeout,
		keptWriteBuf: maxKeptWriteBuf,
		closed:       make(chan struct{}),
	}
	c.runs, _ = owner.(runOwner)
	c.log = log.With("conn", c.id, "remote", remote)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.pmu.calls = make(map[int32]*call)
	// Answers keep their ext fields raw until finish knows whose they
	// are: only a call that asked (CallOptions.RawAnswer) reads them so.
	c.limits.RawAnswers = true
	c.in.max = maxFrame
	c.lastRead.Store(time.Now().UnixNano())
	return c
}

// ID returns a process-wide unique connection number.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr returns the peer's address (host:port).
func (c *Conn) RemoteAddr() string { return c.remote }

// LocalAddr returns this end's address (host:port).
func (c *Conn) LocalAddr() string { return c.local }

// Closed returns a channel that is closed when the connection closes.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// Done is Closed, under the name of context.Context's signal.
func (c *Conn) Done() <-chan struct{} { return c.closed }

// Language returns the language field of the first request the peer sent
// ("JAVA", "GO", ...), or "" before any: on a Server's connection, the
// client's language, as Java's broker records it for a client channel.
func (c *Conn) Language() string {
	if !c.peerSet.Load() {
		return ""
	}
	return c.peer.language
}

// Version returns the version field of the first request the peer sent
// (the client's RocketMQ version, 317 for V4_5_2), or 0 before any.
func (c *Conn) Version() int16 {
	if !c.peerSet.Load() {
		return 0
	}
	return c.peer.version
}

// notePeer records the peer's language and version from its first request.
func (c *Conn) notePeer(req *protocol.Command) {
	c.peerMu.Lock()
	defer c.peerMu.Unlock()
	if c.peerSet.Load() {
		return
	}
	c.peer.language, c.peer.version = req.Language, req.Version
	c.peerSet.Store(true)
}

// Err returns why the connection closed, or nil while it is open.
func (c *Conn) Err() error {
	select {
	case <-c.closed:
		return c.reason
	default:
		return nil
	}
}

// SetValue attaches v to the connection under key (a client id, say).
func (c *Conn) SetValue(key, v any) { c.values.Store(key, v) }

// Value returns what SetValue stored under key, or nil.
func (c *Conn) Value(key any) any {
	v, _ := c.values.Load(key)
	return v
}

func (c *Conn) String() string { return fmt.Sprintf("conn#%d(%s)", c.id, c.remote) }

// Close closes the connection: calls waiting on it fail with ErrConnClosed
// and the owner's close hook runs. Closing twice is harmless.
func (c *Conn) Close() error {
	c.closeWith(errors.New("closed locally"))
	return nil
}

// closeWith closes the connection once, recording reason.
func (c *Conn) closeWith(reason error) {
	// Not a sync.Once: closing the transport can call back into closeWith
	// (netpoll runs close callbacks synchronously), and that must return.
	if !c.closing.CompareAndSwap(false, true) {
		return
	}
	{
		c.reason = reason
		closedErr := fmt.Errorf("%w: %s: %w", ErrConnClosed, c.remote, reason)

		c.wmu.Lock()
		c.wmu.err = closedErr
		c.wmu.buf = nil
		c.wmu.Unlock()

		c.pmu.Lock()
		calls := c.pmu.calls
		c.pmu.calls = nil
		c.pmu.Unlock()

		close(c.closed)
		c.cancel()
		_ = c.tr.close()
		for _, cl := range calls {
			c.finish(cl, nil, closedErr)
		}
		c.owner.connClosed(c, reason)
	}
}

// Reply sends resp, a response, to the peer; it sets FlagResponse. It may be
// called from any goroutine and at any time. The response's Opaque must be
// the request's (protocol.NewResponse copies it). A handler answering later
// should use a Responder (Conn.Defer), which also minds oneway requests,
// answers at most once and runs the interceptors.
//
// A nil error means the frame was written or queued behind a write in
// progress; a write that fails later closes the connection. A body of
// minBorrowedBody or more is written from resp.Body itself, not copied, so
// it must not change after Reply (a pull's answer is a fresh buffer).
func (c *Conn) Reply(resp *protocol.Command) error {
	if resp == nil {
		return errors.New("remoting: Reply of a nil command")
	}
	resp.Flag |= protocol.FlagResponse
	// Wait for other answers only when some are coming (serving counts the
	// handler replying, hence > 1): a lone reply that yields waits a
	// scheduling round for nothing, and under netpoll, whose poller
	// goroutine sits in epoll_wait holding a P, that round lasts until the
	// poller wakes or sysmon takes the P back. Tracing 1 request in flight
	// showed 11-16 µs of such delay per round trip.
	return c.send(resp, c.serving.Load() > 1)
}

// send appends cmd's frame to the write buffer and, unless another goroutine
// is writing already, writes the buffer until it is empty. While a write
// syscall is in progress other senders only append, so frames sent
// concurrently go out in one syscall. With yield the writer first lets the
// other runnable goroutines append theirs.
func (c *Conn) send(cmd *protocol.Command, yield bool) error {
	c.wmu.Lock()
	if err := c.wmu.err; err != nil {
		c.wmu.Unlock()
		release(cmd.ReleaseBody)
		return err
	}
	if err := c.appendLocked(cmd); err != nil {
		c.wmu.Unlock()
		return err
	}
	return c.flushLocked(yield)
}

// sendAll is send for several frames, which go out in one write (or
// behind one in progress). A frame that cannot be encoded is left out and
// reported; the others are sent.
func (c *Conn) sendAll(cmds []*protocol.Command) error {
	c.wmu.Lock()
	if err := c.wmu.err; err != nil {
		c.wmu.Unlock()
		for _, cmd := range cmds {
			release(cmd.ReleaseBody)
		}
		return err
	}
	var encErr error
	for _, cmd := range cmds {
		if err := c.appendLocked(cmd); err != nil && encErr == nil {
			encErr = err
		}
	}
	if err := c.flushLocked(false); err != nil {
		return err
	}
	return encErr
}

// appendLocked appends cmd's frame to the write buffer; c.wmu is held and
// the connection open.
func (c *Conn) appendLocked(cmd *protocol.Command) error {
	n := len(c.wmu.buf)
	borrow := cmd.IsResponse() && len(cmd.Body) >= minBorrowedBody
	var buf []byte
	var err error
	if borrow {
		buf, err = protocol.AppendFrameHead(c.wmu.buf, cmd)
	} else {
		buf, err = protocol.AppendFrame(c.wmu.buf, cmd)
	}
	if err != nil {
		c.wmu.buf = buf[:n]
		release(cmd.ReleaseBody)
		return fmt.Errorf("remoting: encode %v for %s: %w", cmd, c.remote, err)
	}
	c.wmu.buf = buf
	if borrow {
		c.wmu.bodies = append(c.wmu.bodies, borrowedBody{at: len(buf), body: cmd.Body, release: cmd.ReleaseBody})
	} else if cmd.ReleaseBody != nil {
		// Copied into buf: the body is its owner's again. Called under
		// wmu, so it must be quick (a pool's Put).
		cmd.ReleaseBody()
	}
	return nil
}

// flushLocked writes the buffer until it is empty, unless another
// goroutine is writing already (it takes what was appended). c.wmu is
// held on entry and released on return. With yield the writer first lets
// the other runnable goroutines append their frames, so that one write
// syscall carries several of them.
func (c *Conn) flushLocked(yield bool) error {
	if c.wmu.flushing {
		c.wmu.Unlock()
		return nil
	}
	c.wmu.flushing = true
	if yield {
		c.wmu.Unlock()
		runtime.Gosched()
		c.wmu.Lock()
	}
	for len(c.wmu.buf) > 0 && c.wmu.err == nil {
		out, bodies, vec := c.wmu.buf, c.wmu.bodies, c.wmu.vec
		c.wmu.buf, c.wmu.bodies = c.wmu.spare[:0], c.wmu.sparebodies[:0]
		c.wmu.spare, c.wmu.sparebodies, c.wmu.vec = nil, nil, nil
		c.wmu.Unlock()

		vec = writeVector(vec[:0], out, bodies)
		err := c.write(vec)
		clear(vec)
		for _, b := range bodies {
			release(b.release)
		}
		clear(bodies) // the bodies are their senders' again

		c.wmu.Lock()
		if cap(out) <= c.keptWriteBuf {
			c.wmu.spare = out[:0]
		}
		c.wmu.sparebodies, c.wmu.vec = bodies[:0], vec[:0]
		if err != nil {
			c.wmu.flushing = false
			c.wmu.Unlock()
			err = fmt.Errorf("write to %s: %w", c.remote, err)
			c.closeWith(err)
			return fmt.Errorf("%w: %s: %w", ErrConnClosed, c.remote, err)
		}
	}
	c.wmu.flushing = false
	c.wmu.Unlock()
	// Our frames went out in the first batch; frames of others that were
	// dropped by a close in between are their senders' loss, reported to
	// them only as the connection closing.
	return nil
}

// release calls fn, a response's ReleaseBody, if it is set.
func release(fn func()) {
	if fn != nil {
		fn()
	}
}

// writing reports whether a goroutine is writing to the peer or frames wait
// to be written.
func (c *Conn) writing() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.wmu.err == nil && (c.wmu.flushing || len(c.wmu.buf) > 0)
}

// writeVector appends to vec the pieces of one write: out, with each
// borrowed body inserted after the bytes its frame head ends at.
func writeVector(vec [][]byte, out []byte, bodies []borrowedBody) [][]byte {
	prev := 0
	for _, b := range bodies {
		if b.at > prev {
			vec = append(vec, out[prev:b.at])
		}
		vec = append(vec, b.body)
		prev = b.at
	}
	if prev < len(out) {
		vec = append(vec, out[prev:])
	}
	return vec
}

// write hands out to the transport. It is the one place a transport's panic
// is contained: netpoll v0.7.2 can panic when a write races the peer's
// close (the output buffer is released under the writer), which is a
// closed connection, not a crash of the process.
func (c *Conn) write(out [][]byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Warn("remoting: write to a closing connection panicked", "panic", p)
			err = fmt.Errorf("remoting: write on closing connection: %v", p)
		}
	}()
	return c.tr.write(out)
}

// feed takes bytes read from the peer and dispatches every complete frame
// in them. A returned error means the peer broke the protocol; the caller
// closes the connection with it.
func (c *Conn) feed(p []byte) error {
	err := c.in.split(p, c.onFrame)
	c.flushRun()
	return err
}

// onFrame handles one complete frame, which it owns.
func (c *Conn) onFrame(frame []byte) error {
	c.gotFrame = true
	cmd, err := protocol.DecodeFrameLimits(frame, c.limits)
	if err != nil {
		return c.refused(err)
	}
	c.lastRead.Store(time.Now().UnixNano())
	if cmd.IsResponse() {
		c.complete(cmd)
		return nil
	}
	if !c.peerSet.Load() {
		c.notePeer(cmd)
	}
	c.serving.Add(1)
	if c.runs != nil && c.runs.runnable(cmd.Code) {
		c.collect(cmd, frame)
		return nil
	}
	if !c.owner.dispatch(c, cmd) {
		c.serving.Add(-1)
	}
	return nil
}

// serve handles one request that onFrame dispatched. A panic in the handler
// is recovered below serveRequest, so serving is always decremented.
func (c *Conn) serve(req *protocol.Command) {
	c.owner.serveRequest(c, req)
	c.serving.Add(-1)
}

// setLimits bounds the headers of the requests c accepts; call it before
// its first bytes are fed.
func (c *Conn) setLimits(lim protocol.Limits) {
	lim.RawAnswers = true
	c.limits = lim
	c.in.maxHeader = lim.MaxHeaderSize
	c.in.oversize = c.onOversize
}

// onOversize refuses a frame whose header was over the limit, from what
// the splitter kept of it, or closes the connection when it cannot.
func (c *Conn) onOversize(o oversizedFrame) error {
	c.gotFrame = true
	return c.refused(protocol.RefuseOversizedHeader(o.serType, o.head, o.tail, o.headerLen, c.limits.MaxHeaderSize))
}

// refused answers a frame the decoder refused with a *protocol.RequestError
// (see refuse); any other error it returns, to close the connection.
func (c *Conn) refused(err error) error {
	var re *protocol.RequestError
	if !errors.As(err, &re) {
		return err
	}
	c.lastRead.Store(time.Now().UnixNano())
	c.refuse(re)
	return nil
}

// refuse answers a frame the decoder refused (a header over the limits, a
// code outside int16) with its code and remark; a oneway request gets no
// answer, and a response so refused fails the call waiting for it.
func (c *Conn) refuse(re *protocol.RequestError) {
	req := re.Request
	if req.IsResponse() {
		c.pmu.Lock()
		cl, ok := c.pmu.calls[req.Opaque]
		delete(c.pmu.calls, req.Opaque)
		c.pmu.Unlock()
		if ok {
			c.finish(cl, nil, fmt.Errorf("remoting: unreadable response from %s: %w", c.remote, re))
		}
		return
	}
	c.log.Warn("remoting: request refused", "code", req.Code, "opaque", req.Opaque, "oneway", req.IsOneway(), "reason", re.Remark)
	if req.IsOneway() {
		return
	}
	if err := c.Reply(protocol.NewResponse(req, re.Code, re.Remark)); err != nil {
		c.log.Debug("remoting: refusal not sent", "opaque", req.Opaque, "err", err)
	}
}

// protocolError closes the connection because the peer sent bytes that are
// not RocketMQ frames, and logs why.
func (c *Conn) protocolError(err error) {
	if !c.gotFrame {
		_, isClient := c.owner.(*Client)
		nre := &notRocketMQError{addr: c.remote, server: isClient, sent: string(c.in.first[:c.in.nFirst]), err: err}
		if s, ok := c.owner.(*Server); ok {
			nre.kind, nre.grpcHint = classifyForeign(c.in.first[:c.in.nFirst]), s.cfg.GRPCAddrHint
		}
		if nre.kind == foreignHTTP2 {
			c.refuseHTTP2(nre.Error())
		}
		c.log.Warn("remoting: closing connection: not RocketMQ", "err", nre, "detail", err)
		c.closeWith(nre)
		return
	}
	c.log.Warn("remoting: closing connection: bad frame", "err", err)
	c.closeWith(fmt.Errorf("remoting: bad frame from %s: %w", c.remote, err))
}
