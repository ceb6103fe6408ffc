package remoting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/netpoll"
)

// netpollReadSize is the size of the poller's reads from a connection.
const netpollReadSize = 64 << 10

// netpoll keeps its pollers and its runner in package globals, so they are
// configured once per process, by the first netpoll Server.
var processNetpoll netpollSetup

// netpollSetup configures netpoll at most once and keeps the outcome, so
// that every netpoll Server's Start reports a failure, not only the first
// one's, and all of them know how many pollers run.
type netpollSetup struct {
	once    sync.Once
	pollers int
	err     error
}

// do configures netpoll through configure (netpoll.Configure) on its first
// call and returns, on every call, how many pollers run and what the
// configuration returned.
func (s *netpollSetup) do(cfg *ServerConfig, configure func(netpoll.Config) error) (pollers int, err error) {
	s.once.Do(func() { s.pollers, s.err = setUpNetpoll(cfg, configure) })
	return s.pollers, s.err
}

// procs is the GOMAXPROCS this package last set, 0 before it set any.
var procs struct {
	sync.Mutex
	set int
}

func configureNetpoll(cfg *ServerConfig) error {
	pollers, err := processNetpoll.do(cfg, netpoll.Configure)
	if err != nil {
		return err
	}
	if _, fixed := os.LookupEnv("GOMAXPROCS"); !fixed && !cfg.NetpollKeepGOMAXPROCS {
		addPollerProcs(pollers)
	}
	return nil
}

// setUpNetpoll configures netpoll through configure (netpoll.Configure)
// and returns how many pollers it runs: none when it failed, so no P is
// added for them.
func setUpNetpoll(cfg *ServerConfig, configure func(netpoll.Config) error) (pollers int, err error) {
	c := netpoll.Config{
		// The poller's first read from a connection is BufferSize
		// bytes (default one page), growing only when a read fills it.
		// A peer that writes a burst and closes (the official client's
		// last offset updates) gets an RST back once our first replies
		// reach its closed socket, and the kernel drops whatever we had
		// not read by then: read big from the start.
		BufferSize:   netpollReadSize,
		PollerNum:    cfg.NetpollPollers,
		LoggerOutput: netpollLog{cfg.Logger},
	}
	if err := configure(c); err != nil {
		return 0, fmt.Errorf("remoting: configure netpoll: %w", err)
	}
	if cfg.NetpollPollers > 0 {
		return cfg.NetpollPollers, nil
	}
	return runtime.GOMAXPROCS(0)/20 + 1, nil // netpoll's default
}

// addPollerProcs adds one P per netpoll poller to GOMAXPROCS, unless it
// is the value it set last (a second Start); a value set by anyone else
// since (the testing package resets it before each benchmark) gets the
// pollers' Ps added in turn.
//
// Why: a netpoll poller waits for events in epoll_wait through
// syscall.Syscall6, not through the runtime's netpoller, so the goroutine
// keeps its P while it waits, until sysmon takes the P back (after 20 µs
// at least, up to 10 ms when sysmon has been idle). Under load the poller
// waits thousands of times a second, so on a small machine the handlers ran
// with a P fewer: on 2 cores, 16 synchronous senders got 0.76x the sends/s
// of the standard library's net (whose waits hand their P on), 0.96x with
// one P added, at the same CPU per send (BenchmarkSendACL/acl=false, broker
// and client in one process). golang/go#76290 asks for a blocking
// EpollWait that would make this unnecessary. Setting GOMAXPROCS ends the
// runtime's own updates of it to a changed CPU limit (Go 1.25); a process
// whose limit changes while it runs can set NetpollKeepGOMAXPROCS.
func addPollerProcs(pollers int) {
	procs.Lock()
	defer procs.Unlock()
	if cur := runtime.GOMAXPROCS(0); cur != procs.set {
		procs.set = cur + pollers
		runtime.GOMAXPROCS(procs.set)
	}
}

// netpollLog routes netpoll's own log lines (it uses the log package) to
// the first netpoll Server's slog.Logger.
type netpollLog struct{ log *slog.Logger }

func (l netpollLog) Write(p []byte) (int, error) {
	l.log.Warn("netpoll: " + strings.TrimSpace(string(p)))
	return len(p), nil
}

// netpollTransport is the write half of a netpoll connection.
type netpollTransport struct{ nc netpoll.Connection }

// write may panic when it races the peer's close; Conn.write contains it.
// netpoll links a piece larger than 4 KiB into its output buffer without
// copying it, and Flush sends all pieces with one sendmsg.
func (t netpollTransport) write(bufs [][]byte) error {
	if !t.nc.IsActive() {
		return netpoll.ErrConnClosed
	}
	w := t.nc.Writer()
	for _, b := range bufs {
		if _, err := w.WriteBinary(b); err != nil {
			return err
		}
	}
	return w.Flush()
}

func (t netpollTransport) close() error { return t.nc.Close() }

type netpollListener struct {
	evl netpoll.EventLoop
	// served is closed when the goroutine running evl.Serve returns.
	served chan struct{}
}

func (l *netpollListener) close() error {
	// The server closed its connections already; Shutdown returns once
	// netpoll has dropped them. The bound only matters if a connection is
	// mid-callback.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		// netpoll's Shutdown does nothing when Serve has not yet installed
		// its server (a Close right after Start), and Serve would then wait
		// for a quit signal forever. Repeat until Serve has returned.
		err := l.evl.Shutdown(ctx)
		select {
		case <-l.served:
			return err
		case <-ctx.Done():
			return fmt.Errorf("remoting: netpoll shutdown: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (s *Server) listenNetpoll() (listener, string, error) {
	if err := configureNetpoll(&s.cfg); err != nil {
		return nil, "", err
	}
	ln, err := netpoll.CreateListener("tcp", s.cfg.Addr)
	if err != nil {
		return nil, "", err
	}
	opts := []netpoll.Option{
		netpoll.WithOnPrepare(s.onNetpollPrepare),
		netpoll.WithWriteTimeout(s.cfg.WriteTimeout),
	}
	// netpoll calls onRequest on a goroutine of its pool when bytes come
	// in (see onNetpollRequest). Not for a TLS server: it reads each
	// connection in a goroutine of its own (negotiateNetpoll), and netpoll
	// would call onRequest again and again for the bytes it must leave to
	// the handshake.
	var onRequest netpoll.OnRequest
	if s.cfg.TLSMode == TLSDisabled {
		onRequest = s.onNetpollRequest
	}
	evl, err := netpoll.NewEventLoop(onRequest, opts...)
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	addr := ln.Addr().String()
	served := make(chan struct{})
	if !s.spawn(func() {
		defer close(served)
		if err := evl.Serve(ln); err != nil && !errors.Is(err, netpoll.ErrConnClosed) {
			s.log.Debug("remoting: netpoll serve returned", "addr", addr, "err", err)
		}
	}) {
		ln.Close()
		return nil, "", ErrClosed
	}
	return &netpollListener{evl: evl, served: served}, addr, nil
}

// onNetpollPrepare runs on the poller when a connection is accepted, before
// it is registered for reading. A plain connection's Conn travels in the
// context netpoll hands to onNetpollRequest.
func (s *Server) onNetpollPrepare(nc netpoll.Connection) context.Context {
	if s.cfg.TLSMode != TLSDisabled {
		if !s.spawn(func() { s.negotiateNetpoll(nc) }) {
			nc.Close()
		}
		return context.Background()
	}
	if c := s.addNetpollConn(nc); c != nil {
		return context.WithValue(context.Background(), netpollConnKey{}, c)
	}
	return context.Background()
}

// netpollConnKey keys a plain netpoll connection's Conn in its context.
type netpollConnKey struct{}

// addNetpollConn adds a plain netpoll connection; nil if the server refused
// it (closed).
func (s *Server) addNetpollConn(nc netpoll.Connection) *Conn {
	c := s.addConn(netpollTransport{nc}, nc.RemoteAddr().String(), nc.LocalAddr().String())
	if c == nil {
		nc.Close()
		return nil
	}
	nc.AddCloseCallback(func(netpoll.Connection) error {
		c.closeWith(errors.New("closed by peer"))
		return nil
	})
	return c
}

// serveNetpoll adds a plain connection that a TLS server's negotiation
// found, and starts its reader.
func (s *Server) serveNetpoll(nc netpoll.Connection) {
	c := s.addNetpollConn(nc)
	if c == nil {
		return
	}
	if !s.spawn(func() { netpollRead(c, nc, true) }) {
		c.closeWith(ErrClosed)
	}
}

// onNetpollRequest is a plain connection's reader, run by netpoll when
// bytes come in: it feeds them and returns once nothing is buffered and no
// frame is half read, and netpoll runs it again when more come (and once
// more for bytes buffered when the peer closed). So an idle connection
// holds no goroutine: with one parked per connection, 5,000 idle
// connections kept 5,000 goroutines, whose records the runtime keeps for
// good (2.4 MiB after they closed).
func (s *Server) onNetpollRequest(ctx context.Context, nc netpoll.Connection) error {
	c, ok := ctx.Value(netpollConnKey{}).(*Conn)
	if !ok {
		// Refused at prepare and closed there; netpoll calls this until
		// its input is read or the connection is closed.
		return nc.Close()
	}
	// Counted with the server's goroutines, so that Close waits for it.
	if !s.goroutines.Run(func() { netpollRead(c, nc, false) }) {
		return nc.Close() // closing: its input is not read any more
	}
	return nil
}

// netpollRead feeds c what nc reads. A connection's own reader (park)
// blocks until bytes are buffered; netpoll's (onNetpollRequest) returns
// when none are and no frame is half read. Bytes buffered before the peer
// closed are fed before the EOF is seen.
//
// It waits for what completes the frame being split (frameSplitter.pending,
// up to one read's worth) rather than for any byte: the official client
// writes each request in four calls, which the poller reads as they come,
// and a reader woken for each piece fed each piece alone. Its connection
// took 0.72x the feeds for the same sends (bench/'s process topology,
// 50,000 sends; docs/performance-history.md, session 20).
func netpollRead(c *Conn, nc netpoll.Connection, park bool) {
	r := nc.Reader()
	for {
		if !park && r.Len() == 0 && c.in.between() {
			return
		}
		want := min(c.in.pending(), netpollReadSize)
		if _, err := r.Peek(want); err != nil {
			// netpoll may report the peer's close while bytes it read just
			// before are still buffered (the EOF trigger can overtake the
			// data trigger). Dispatch them first: the official client sends
			// its last offset updates and closes without waiting.
			if n := r.Len(); n > 0 {
				if b, nerr := r.Next(n); nerr == nil {
					ferr := c.feed(b)
					_ = r.Release()
					if ferr != nil {
						c.protocolError(ferr)
						return
					}
				}
			}
			c.closeWith(fmt.Errorf("read: %w", err))
			return
		}
		// At most one read's worth at a time: Next copies bytes that span
		// netpoll's buffer nodes into one new slice, and a peer streaming a
		// frame we drop (a header over the limit) must not make us hold it.
		b, err := r.Next(min(r.Len(), netpollReadSize))
		if err == nil {
			err = c.feed(b)
			_ = r.Release()
			if err != nil {
				c.protocolError(err)
				return
			}
			continue
		}
		c.closeWith(fmt.Errorf("read: %w", err))
		return
	}
}
