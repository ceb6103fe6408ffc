package remoting

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/internal/gogroup"
	"github.com/runnelmq/runnel/internal/latch"
	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Server accepts connections and dispatches their requests to handlers.
type Server struct {
	cfg      ServerConfig
	log      *slog.Logger
	handlers handlerTable
	runs     atomic.Pointer[runTable] // the run handler (run.go), or nil

	mu struct {
		sync.Mutex
		started bool
		closed  bool
		// refusing: StopAccepting was called; new connections are closed.
		refusing bool
		conns    map[uint64]*Conn
		// pending are connections of a TLS-enabled server waiting for
		// their first byte or handshake (tls_server.go).
		pending map[io.Closer]struct{}
	}
	// goroutines are every goroutine the server owns: the accept or serve
	// loop, the idle sweeper, per-connection readers and request handlers.
	// Close stops them under mu as it sets closed.
	goroutines gogroup.Group
	stop       chan struct{} // closed by Close; stops the idle sweeper and the worker retirer

	// workers run the handlers of inbound requests.
	workers workerPool

	addr     string
	listener listener
}

// listener is the accepting half of a transport.
type listener interface {
	// close stops accepting; connections are closed by the Server.
	close() error
}

// NewServer validates cfg, fills in its defaults and returns a Server that
// is not yet listening.
func NewServer(cfg ServerConfig) (*Server, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, stop: make(chan struct{})}
	s.mu.conns = make(map[uint64]*Conn)
	s.workers.spawn = s.spawn
	return s, nil
}

// Handle registers h for requests with the given code. Register handlers
// before Start; a handler registered later serves requests that arrive after
// it. A nil h removes the registration.
func (s *Server) Handle(code int16, h Handler) { s.handlers.set(code, h, false) }

// HandleDefault registers h for codes without a handler of their own.
// Without one the server answers REQUEST_CODE_NOT_SUPPORTED with the remark
// "request code N not supported".
func (s *Server) HandleDefault(h Handler) { s.handlers.set(0, h, true) }

// Codes returns the request codes with a handler of their own, in
// ascending order (not the default handler's): what a server serves, for
// a check that each has what it needs, such as an access-control mapping.
func (s *Server) Codes() []int16 {
	m := s.handlers.tab.Load()
	if m == nil {
		return nil
	}
	codes := make([]int16, 0, len(m.byCode))
	for c := range m.byCode {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.mu.started {
		s.mu.Unlock()
		return errors.New("remoting: server already started")
	}
	s.mu.started = true
	s.mu.Unlock()

	var err error
	switch s.cfg.Transport {
	case TransportStd:
		s.listener, s.addr, err = s.listenStd()
	default:
		s.listener, s.addr, err = s.listenNetpoll()
	}
	if err != nil {
		return fmt.Errorf("remoting: listen on %s: %w", s.cfg.Addr, err)
	}
	if s.cfg.IdleTimeout > 0 {
		s.spawn(s.sweepIdle)
	}
	s.spawn(func() { s.workers.retireLoop(s.stop) })
	s.log.Debug("remoting: serving", "addr", s.addr, "transport", s.cfg.Transport, "tls", s.cfg.TLSMode)
	return nil
}

// Addr returns the address the server listens on (host:port), or "" before
// Start.
func (s *Server) Addr() string { return s.addr }

// ParkedWorkers is how many request workers are parked, waiting for the
// requests to come: up to a busy moment's concurrency, for two retire
// ticks (5-10 s) after it.
func (s *Server) ParkedWorkers() int { return s.workers.idleCount() }

// Conns returns the open connections.
func (s *Server) Conns() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.mu.conns))
}

// StopAccepting closes every connection that arrives from now on, as soon
// as it arrives; the connections already open are served on until Close.
// A broker calls it first as it shuts down, so no client starts on a
// broker that is draining.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	s.mu.refusing = true
	s.mu.Unlock()
}

// Close stops accepting, closes every connection (failing the server's own
// calls in flight on them and cancelling handler contexts), and waits for
// every goroutine the server started, handlers included. Handlers should
// return once their context is cancelled. Closing twice is harmless.
func (s *Server) Close() error {
	if !latch.Set(&s.mu, &s.mu.closed) {
		return nil
	}
	s.goroutines.Stop()
	s.mu.Lock() // closed: no connection or pending handshake is added any more
	conns := slices.Collect(maps.Values(s.mu.conns))
	pending := slices.Collect(maps.Keys(s.mu.pending))
	s.mu.Unlock()
	for _, nc := range pending {
		nc.Close()
	}

	// Order: the worker pool first, so that no request is dispatched from
	// here on (as spawn refuses once closed is set) and parked workers exit;
	// then connections (new ones are refused because closed is set), then
	// the listener, whose netpoll shutdown waits for its connections to go
	// idle, then every goroutine, busy workers included.
	close(s.stop)
	s.workers.close()
	waitWritesDone(conns, closeFlushWait)
	for _, c := range conns {
		c.closeWith(ErrClosed)
	}
	var err error
	if s.listener != nil {
		err = s.listener.close()
	}
	s.goroutines.Wait()
	return err
}

// closeFlushWait bounds how long Close lets connections finish writing
// what was queued before it, such as the answers a draining broker gave its
// held pulls: long enough for a loopback or LAN peer that reads, short
// enough that a peer which stopped reading does not hold up shutdown.
const closeFlushWait = time.Second

// waitWritesDone returns once none of conns is writing or has frames
// queued, or after d. A frame queued behind another goroutine's write is
// written by that goroutine when its write returns; closing the connection
// before then would drop it although Reply had returned nil.
func waitWritesDone(conns []*Conn, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, c := range conns {
		for c.writing() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}

// spawn implements connOwner.
func (s *Server) spawn(fn func()) bool { return s.goroutines.Go(fn) }

// dispatch implements connOwner: requests run on the worker pool.
func (s *Server) dispatch(c *Conn, req *protocol.Command) bool {
	return s.workers.run(task{c: c, req: req})
}

// serveRequest implements connOwner.
func (s *Server) serveRequest(c *Conn, req *protocol.Command) {
	if len(s.cfg.Interceptors) == 0 {
		s.handlers.serve(s.log, c, req)
		return
	}
	s.serveIntercepted(c, req)
}

// addConn registers a new connection and runs the OnConnect hook. It returns
// nil when the server is closing or refusing connections; the caller then
// closes the transport.
func (s *Server) addConn(tr transport, remote, local string) *Conn {
	c := newConn(s, tr, remote, local, s.cfg.MaxFrameSize, s.cfg.CallTimeout, s.log)
	c.setLimits(s.cfg.limits())
	c.in.pooled = true
	c.setOut(s.cfg.OutInterceptors)
	s.mu.Lock()
	if s.mu.closed || s.mu.refusing {
		s.mu.Unlock()
		return nil
	}
	s.mu.conns[c.id] = c
	s.mu.Unlock()
	c.log.Debug("remoting: connection accepted")
	if s.cfg.OnConnect != nil {
		s.cfg.OnConnect(c)
	}
	return c
}

// connClosed implements connOwner.
func (s *Server) connClosed(c *Conn, reason error) {
	s.mu.Lock()
	delete(s.mu.conns, c.id)
	s.mu.Unlock()
	c.log.Debug("remoting: connection closed", "reason", reason)
	if s.cfg.OnClose != nil {
		s.cfg.OnClose(c)
	}
}

// sweepIdle closes connections that have sent no frame for IdleTimeout.
func (s *Server) sweepIdle() {
	periodic.Run(s.stop, max(s.cfg.IdleTimeout/4, time.Millisecond), func() {
		limit := time.Now().Add(-s.cfg.IdleTimeout).UnixNano()
		for _, c := range s.Conns() {
			if c.lastRead.Load() < limit {
				c.log.Info("remoting: closing idle connection", "idle", s.cfg.IdleTimeout)
				c.closeWith(fmt.Errorf("%w: no frame from %s for %v", ErrIdle, c.remote, s.cfg.IdleTimeout))
			}
		}
	})
}
