package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/runnelmq/runnel/internal/gogroup"
	"github.com/runnelmq/runnel/internal/latch"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Client sends requests to remoting servers over the standard library's net.
// It keeps one connection per address, dialled on first use and again after
// it closes, and multiplexes concurrent calls over it by opaque.
type Client struct {
	cfg      ClientConfig
	log      *slog.Logger
	handlers handlerTable

	mu struct {
		sync.Mutex
		closed bool
		conns  map[string]*dialing
	}
	// goroutines are the client's: connection readers, handlers of
	// server-initiated requests and async callbacks. Close stops them
	// under mu as it sets closed.
	goroutines gogroup.Group
}

// dialing is an address's connection, or the dial in progress for it.
type dialing struct {
	done chan struct{} // closed when the dial finished
	conn *Conn
	err  error
}

// NewClient returns a Client; zero fields of cfg take their defaults.
func NewClient(cfg ClientConfig) *Client {
	cfg.ensureDefaults()
	cl := &Client{cfg: cfg, log: cfg.Logger}
	cl.mu.conns = make(map[string]*dialing)
	return cl
}

// Handle registers h for requests the server sends to this client (such as
// NOTIFY_CONSUMER_IDS_CHANGED). The conn passed to h is the client's
// connection to that server; h answers by returning a response or through
// conn.Reply. Codes without a handler are answered with
// REQUEST_CODE_NOT_SUPPORTED.
func (cl *Client) Handle(code int16, h Handler) { cl.handlers.set(code, h, false) }

// HandleDefault registers h for server requests without a handler of their
// own.
func (cl *Client) HandleDefault(h Handler) { cl.handlers.set(0, h, true) }

// Invoke sends req to addr and waits for the response; see Conn.Invoke. The
// connection is dialled if there is none.
func (cl *Client) Invoke(ctx context.Context, addr string, req *protocol.Command) (*protocol.Command, error) {
	return cl.InvokeWith(ctx, addr, req, CallOptions{})
}

// InvokeWith is Invoke with opts; see Conn.InvokeWith. When it has to
// dial (or wait for another caller's dial), opts.Timeout bounds that too.
func (cl *Client) InvokeWith(ctx context.Context, addr string, req *protocol.Command, opts CallOptions) (*protocol.Command, error) {
	c := cl.liveConn(addr)
	if c == nil {
		dctx := ctx
		if opts.Timeout > 0 {
			var cancel context.CancelFunc
			dctx, cancel = context.WithTimeout(ctx, opts.Timeout)
			defer cancel()
		}
		start := time.Now()
		var err error
		if c, err = cl.Conn(dctx, addr); err != nil {
			return nil, err
		}
		if opts.Timeout > 0 {
			if opts.Timeout -= time.Since(start); opts.Timeout <= 0 {
				return nil, &TimeoutError{Addr: addr, Code: req.Code}
			}
		}
	}
	return c.InvokeWith(ctx, req, opts)
}

// liveConn returns the open connection to addr, or nil when there is none
// yet (or it is being dialled, or has closed).
func (cl *Client) liveConn(addr string) *Conn {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if d := cl.mu.conns[addr]; d != nil {
		return d.live()
	}
	return nil
}

// live returns d's connection once its dial succeeded, while it is open.
func (d *dialing) live() *Conn {
	select {
	case <-d.done:
	default:
		return nil
	}
	if d.err != nil || d.conn.Err() != nil {
		return nil
	}
	return d.conn
}

// InvokeAsync sends req to addr and returns once it is written; cb runs
// exactly once, in its own goroutine, with the response or the error. When
// InvokeAsync returns an error cb is not called.
func (cl *Client) InvokeAsync(ctx context.Context, addr string, req *protocol.Command, cb func(*protocol.Command, error)) error {
	c, err := cl.Conn(ctx, addr)
	if err != nil {
		return err
	}
	return c.InvokeAsync(ctx, req, cb)
}

// InvokeOneway sends req to addr with FlagOneway set and waits for nothing.
func (cl *Client) InvokeOneway(ctx context.Context, addr string, req *protocol.Command) error {
	c, err := cl.Conn(ctx, addr)
	if err != nil {
		return err
	}
	return c.InvokeOneway(req)
}

// Conn returns the open connection to addr, dialling it if needed.
// Concurrent callers share one dial.
func (cl *Client) Conn(ctx context.Context, addr string) (*Conn, error) {
	for {
		cl.mu.Lock()
		if cl.mu.closed {
			cl.mu.Unlock()
			return nil, ErrClosed
		}
		d := cl.mu.conns[addr]
		if d == nil {
			d = &dialing{done: make(chan struct{})}
			cl.mu.conns[addr] = d
			cl.mu.Unlock()
			cl.dial(ctx, addr, d)
			if d.err != nil {
				return nil, d.err
			}
			return d.conn, nil
		}
		cl.mu.Unlock()

		select {
		case <-d.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("remoting: connect to %s: %w", addr, ctx.Err())
		}
		if d.err != nil {
			return nil, d.err
		}
		if c := d.live(); c != nil {
			return c, nil
		}
		// Closed since; connClosed removes it from the map, then we redial.
		cl.forget(addr, d)
	}
}

// dial connects d to addr and publishes the result.
func (cl *Client) dial(ctx context.Context, addr string, d *dialing) {
	defer close(d.done)
	dctx, cancel := context.WithTimeout(ctx, cl.cfg.DialTimeout)
	defer cancel()
	dial := cl.cfg.Dial
	if dial == nil {
		var dialer net.Dialer
		dial = func(ctx context.Context, addr string) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", addr) }
	}
	nc, err := dial(dctx, addr)
	if err != nil {
		d.err = fmt.Errorf("remoting: connect to %s: %w", addr, err)
		cl.forget(addr, d)
		return
	}
	if cl.cfg.TLS != nil {
		if nc, err = cl.handshake(dctx, nc, addr); err != nil {
			d.err = err
			cl.forget(addr, d)
			return
		}
	}
	c := newConn(cl, stdTransport{nc, cl.cfg.WriteTimeout}, addr, nc.LocalAddr().String(), cl.cfg.MaxFrameSize, cl.cfg.CallTimeout, cl.log)
	c.in.trust = clientTrustedLen
	c.keptWriteBuf = clientKeptWriteBuf
	c.setOut(cl.cfg.Interceptors)
	// Under the lock: a closing connection of the same address looks its
	// entry up (connClosed), and this entry may already be the one it finds.
	cl.mu.Lock()
	d.conn = c
	cl.mu.Unlock()
	if !cl.spawn(func() { readLoop(c, nc) }) {
		d.err = ErrClosed
		nc.Close()
		cl.forget(addr, d)
		return
	}
	c.log.Debug("remoting: connected")
}

// forget removes d from the map if it is still addr's entry.
func (cl *Client) forget(addr string, d *dialing) {
	cl.mu.Lock()
	if cl.mu.conns[addr] == d {
		delete(cl.mu.conns, addr)
	}
	cl.mu.Unlock()
}

// CloseConn closes the connection to addr, if any; calls waiting on it fail
// with ErrConnClosed. The next call dials again.
func (cl *Client) CloseConn(addr string) {
	cl.mu.Lock()
	d := cl.mu.conns[addr]
	cl.mu.Unlock()
	if d == nil {
		return
	}
	<-d.done
	if d.conn != nil {
		d.conn.closeWith(errors.New("closed by CloseConn"))
	}
	cl.forget(addr, d)
}

// Close closes every connection, failing the calls in flight with
// ErrConnClosed (wrapping ErrClosed), and waits for the client's goroutines,
// including handlers of server requests and async callbacks.
func (cl *Client) Close() error {
	if !latch.Set(&cl.mu, &cl.mu.closed) {
		return nil
	}
	cl.goroutines.Stop()
	// Closed, no connection is added any more: those left are all there
	// will be.
	cl.mu.Lock()
	ds := slices.Collect(maps.Values(cl.mu.conns))
	cl.mu.Unlock()
	for _, d := range ds {
		<-d.done // a dial in progress ends within DialTimeout
		if d.conn != nil {
			d.conn.closeWith(ErrClosed)
		}
	}
	cl.goroutines.Wait()
	return nil
}

// spawn implements connOwner.
func (cl *Client) spawn(fn func()) bool { return cl.goroutines.Go(fn) }

// dispatch implements connOwner. Servers send a client few requests, so
// each gets a goroutine of its own rather than a pool.
func (cl *Client) dispatch(c *Conn, req *protocol.Command) bool {
	return cl.spawn(func() { c.serve(req) })
}

// serveRequest implements connOwner.
func (cl *Client) serveRequest(c *Conn, req *protocol.Command) {
	cl.handlers.serve(cl.log, c, req)
}

// connClosed implements connOwner.
func (cl *Client) connClosed(c *Conn, reason error) {
	cl.mu.Lock()
	if d := cl.mu.conns[c.remote]; d != nil && d.conn == c {
		delete(cl.mu.conns, c.remote)
	}
	cl.mu.Unlock()
	c.log.Debug("remoting: connection closed", "reason", reason)
	if cl.cfg.OnClose != nil {
		cl.cfg.OnClose(c.remote)
	}
}

// handshake runs the client side of a TLS handshake over nc. A server that
// does not speak TLS (tls.server.mode disabled) closes the connection on
// the ClientHello, which the error names.
func (cl *Client) handshake(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	cfg := cl.cfg.TLS
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg = cfg.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		var hint string
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			hint = " (the server closed the connection: does it accept TLS? its tls.server.mode may be disabled)"
		}
		return nil, fmt.Errorf("remoting: connect to %s: TLS handshake: %w%s", addr, err, hint)
	}
	return tc, nil
}
