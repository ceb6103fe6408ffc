package namesrv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/namesrv/routeinfo"
	"github.com/runnelmq/runnel/remoting"
)

// Server is a running name server.
type Server struct {
	cfg   Config
	log   *slog.Logger
	table *routeinfo.Table
	rs    *remoting.Server
	// metrics is the Prometheus exporter (metrics.go), nil when off.
	metrics *exporter
	acl     *acl.Checker // nil without ACLFile
	// guarded: access control is on; tlsMode is tls.server.mode (the
	// start warns when both would let a signed request be replayed).
	guarded bool
	tlsMode string

	// conns lets the expiry scan close a silent broker's connection, as
	// RocketMQ does, so a broker that is alive but stuck reconnects.
	connsMu sync.Mutex
	conns   map[uint64]*remoting.Conn

	addr  atomic.Pointer[string] // set once serving
	ready chan struct{}          // closed once serving

	stop      chan struct{}
	wg        sync.WaitGroup
	startOnce sync.Once
	closeOnce sync.Once
}

// New validates cfg and returns a Server that is not yet listening.
func New(cfg Config) (*Server, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg,
		log: cfg.Logger.With("component", "namesrv"),
		table: routeinfo.New(routeinfo.Config{
			BrokerExpiry:               cfg.BrokerExpiry,
			Now:                        cfg.Now,
			DeleteTopicsOnRegistration: cfg.DeleteTopicsOnRegistration,
		}),
		conns: make(map[uint64]*remoting.Conn),
		ready: make(chan struct{}),
		stop:  make(chan struct{}),
	}
	rcfg := remoting.DefaultServerConfig()
	rcfg.Addr = cfg.ListenAddr
	rcfg.Transport = cfg.Transport
	rcfg.IdleTimeout = cfg.IdleTimeout
	rcfg.Logger = cfg.Logger
	rcfg.OnConnect = s.onConnect
	rcfg.OnClose = s.onClose
	var err error
	if rcfg.TLSMode, rcfg.TLS, err = cfg.TLS.ServerTLS(); err != nil {
		return nil, fmt.Errorf("namesrv: %w", err)
	}
	// Metrics first: it sees every request, ACL refusals included.
	if cfg.Metrics.Enabled() {
		s.metrics = newExporter(s)
		rcfg.Interceptors = append(rcfg.Interceptors, s.metrics.interceptor())
	}
	g, err := s.guard(cfg)
	if err != nil {
		return nil, err
	}
	if g.Enabled() {
		rcfg.Interceptors = append(rcfg.Interceptors, acl.NewCheckpoint(g, s.aclCodes(), "").Interceptor())
	}
	s.guarded, s.tlsMode = g.Enabled(), rcfg.TLSMode
	rs, err := remoting.NewServer(rcfg)
	if err != nil {
		if s.acl != nil {
			_ = s.acl.Close()
		}
		return nil, fmt.Errorf("namesrv: %w", err)
	}
	s.rs = rs
	s.registerHandlers()
	return s, nil
}

// Start listens and serves in the background.
func (s *Server) Start() error {
	err := ErrAlreadyStarted
	s.startOnce.Do(func() {
		if err = s.rs.Start(); err != nil {
			err = fmt.Errorf("namesrv: %w", err)
			return
		}
		if s.metrics != nil {
			if err = s.metrics.start(); err != nil {
				_ = s.rs.Close()
				return
			}
		}
		addr := s.rs.Addr()
		s.addr.Store(&addr)
		close(s.ready)
		s.wg.Add(1)
		go s.scanLoop()
		s.log.Info("serving", "addr", addr)
		if s.guarded && s.tlsMode != remoting.TLSEnforcing && acl.Reachable(addr) {
			s.log.Warn(acl.ReplayWarning, "addr", addr, "tls.server.mode", s.tlsMode)
		}
	})
	return err
}

// Run starts the server, serves until ctx is done, then closes it. A
// server that fails to start is closed too: New may have started an ACL
// file's watcher.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(); err != nil {
		if !errors.Is(err, ErrAlreadyStarted) {
			_ = s.Close()
		}
		return err
	}
	<-ctx.Done()
	return s.Close()
}

// Addr returns the address the server listens on, or "" until it serves.
// It is safe to call while Start or Run is starting the server.
func (s *Server) Addr() string {
	if p := s.addr.Load(); p != nil {
		return *p
	}
	return ""
}

// Ready is closed once the server serves, for callers of Run.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Table returns the route table, for embedding and tests.
func (s *Server) Table() *routeinfo.Table { return s.table }

// Close stops the expiry scan, then the transport (closing every
// connection and waiting for handlers). Closing twice is harmless.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		s.wg.Wait()
		err = errors.Join(s.metrics.close(), s.rs.Close())
		if s.acl != nil {
			_ = s.acl.Close()
		}
	})
	return err
}

func (s *Server) scanLoop() {
	defer s.wg.Done()
	periodic.Run(s.stop, s.cfg.ScanInterval, func() { s.ExpireBrokers() })
}

// ExpireBrokers runs one expiry scan now: it drops every broker silent for
// longer than its expiry, closes the connections they registered over, and
// returns them. The scan loop calls it every ScanInterval.
func (s *Server) ExpireBrokers() []routeinfo.Broker {
	expired := s.table.ExpireBrokers()
	for _, b := range expired {
		s.log.Warn("broker expired", "cluster", b.ClusterName, "broker", b.BrokerName,
			"id", b.BrokerID, "addr", b.BrokerAddr, "expiry", s.cfg.BrokerExpiry)
		if c := s.conn(b.ConnID); c != nil {
			c.Close()
		}
	}
	return expired
}

func (s *Server) conn(id uint64) *remoting.Conn {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	return s.conns[id]
}

func (s *Server) onConnect(c *remoting.Conn) {
	s.connsMu.Lock()
	s.conns[c.ID()] = c
	s.connsMu.Unlock()
}

// onClose drops the brokers that registered over c (RocketMQ's
// BrokerHousekeepingService.onChannelClose).
func (s *Server) onClose(c *remoting.Conn) {
	s.connsMu.Lock()
	delete(s.conns, c.ID())
	s.connsMu.Unlock()
	for _, b := range s.table.RemoveConn(c.ID()) {
		s.log.Info("broker connection closed; broker removed", "cluster", b.ClusterName,
			"broker", b.BrokerName, "id", b.BrokerID, "addr", b.BrokerAddr, "remote", c.RemoteAddr())
	}
}

// Codes returns the request codes the server has a handler of its own for
// (tests walk them).
func (s *Server) Codes() []int16 { return s.rs.Codes() }
