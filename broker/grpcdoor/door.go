package grpcdoor

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/internal/latch"
	"github.com/runnelmq/runnel/internal/periodic"
)

// Config configures a Door. Core is required.
type Config struct {
	Core *core.Core
	// BrokerName names the broker in routes. Required.
	BrokerName string
	// ListenAddr is the address to serve on (RocketMQ's proxy key
	// grpcServerPort). Default ":8081".
	ListenAddr string
	// Listener, if set, is served instead of listening on ListenAddr
	// (tests that must know a door's port before it starts).
	Listener net.Listener
	// AdvertiseAddr is the ip:port routes hand out as this door's
	// endpoint, for a door behind a port mapping or in a container.
	// Default: the listening address, with an unspecified host replaced
	// as the remoting door's advertised address is (Advertise).
	AdvertiseAddr string
	// Advertise resolves the advertised address from AdvertiseAddr and the
	// address listened on. Default: AdvertiseAddr as given, else the
	// listening address.
	Advertise func(configured, listening string) (netip.AddrPort, error)
	// TLSMode is permissive (default: TLS and plaintext on the one port),
	// enforcing or disabled.
	TLSMode string
	// TLS is the server's TLS configuration; nil makes a self-signed
	// certificate at New (the SDKs do not verify it by default).
	TLS *tls.Config
	// Access, if set, checks every call's signature and permissions
	// (auth.go). Default: every call is allowed.
	Access Access
	// Leader, if set, says where a replicated group's leader's gRPC door
	// is (its advertised address), for a follower's routes; "" unknown.
	Leader func() string
	// Metrics, if set, is told of every call as it ends and of the
	// messages sent and delivered (the broker's exporter).
	Metrics Metrics
	// MaxLongPolling is the longest a receive is held, and the long
	// polling timeout push consumers are told (the proxy's
	// grpcClientConsumerMaxLongPollingTimeoutMillis). Default 20 s.
	MaxLongPolling time.Duration
	// ChannelExpiry forgets a client session idle this long without a
	// Telemetry stream. Default 120 s, as the core expires clients.
	ChannelExpiry time.Duration
	// Renewal is how push consumers' received messages are kept
	// invisible while their listeners run; zero fields take the proxy's
	// defaults (Renewal).
	Renewal Renewal
	// Now is the clock of sessions and receipt times. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Metrics is what the door tells the broker's metrics
// (*metrics.Metrics).
type Metrics interface {
	// ObserveGRPC times a call: its method, its status code's name,
	// whether it was long polling and whether it was answered.
	ObserveGRPC(rpc, code string, longPolling, answered bool, elapsed time.Duration)
	// SentGRPC counts the messages of a send stored: topic, type
	// ("normal", "fifo", "delay", "transaction"), body sizes.
	SentGRPC(topic, messageType string, bodySizes []int)
	// DeliveredGRPC counts messages delivered to a consumer group.
	DeliveredGRPC(topic, group string, msgs, bytes int)
}

// Door is the gRPC front door of one broker.
type Door struct {
	v2.UnimplementedMessagingServiceServer

	cfg   Config
	core  *core.Core
	log   *slog.Logger
	creds *sniffCreds
	srv   *grpc.Server

	sessions *sessions
	renew    *renewals

	mu struct {
		sync.Mutex
		ln        net.Listener
		advertise netip.AddrPort
		closed    bool
	}
	stop chan struct{}
	wg   sync.WaitGroup // Serve, the session sweep and the renewals
}

// New returns a door that serves nothing until Start.
func New(cfg Config) (*Door, error) {
	if cfg.Core == nil {
		return nil, errors.New("grpcdoor: Config.Core is required")
	}
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = ":8081"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxLongPolling <= 0 {
		cfg.MaxLongPolling = maxLongPolling
	}
	if cfg.ChannelExpiry <= 0 {
		cfg.ChannelExpiry = 120 * time.Second
	}
	switch cfg.TLSMode {
	case "":
		cfg.TLSMode = TLSPermissive
	case TLSPermissive, TLSEnforcing, TLSDisabled:
	default:
		return nil, fmt.Errorf("grpcdoor: TLS mode %q: want %s, %s or %s", cfg.TLSMode, TLSPermissive, TLSEnforcing, TLSDisabled)
	}
	if cfg.TLS == nil && cfg.TLSMode != TLSDisabled {
		cert, err := selfSigned()
		if err != nil {
			return nil, err
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	d := &Door{cfg: cfg, core: cfg.Core, log: cfg.Logger.With("door", "grpc"), stop: make(chan struct{})}
	d.sessions = newSessions(d)
	d.renew = newRenewals(d, cfg.Renewal)
	d.creds = newSniffCreds(cfg.TLSMode, cfg.TLS, d.log)
	d.srv = grpc.NewServer(
		grpc.Creds(d.creds),
		// Stop waits for the handlers, so Close leaves none running.
		grpc.WaitForHandlers(true),
		// The SDKs keep their connections open and ping them.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.MaxRecvMsgSize(maxRequestSize),
		grpc.SharedWriteBuffer(true),
		// Calls run on a pool of goroutines whose stacks have grown,
		// rather than each on a new one that grows its stack again: the
		// v5 SDK makes two unary calls a message, and a profile of the
		// door serving it spent 7% of the broker's CPU copying stacks.
		// A call finding every worker busy (held receives) gets a
		// goroutine of its own, as without the pool.
		grpc.NumStreamWorkers(streamWorkers),
		grpc.ChainUnaryInterceptor(d.unaryObserver, d.accessGate),
		grpc.ChainStreamInterceptor(d.streamObserver, d.streamAccessGate),
	)
	v2.RegisterMessagingServiceServer(d.srv, d)
	return d, nil
}

// streamWorkers is how many goroutines serve the door's calls, more than
// the calls a busy broker's clients have in flight at once on two cores
// (16 producers and a push consumer's 20 acknowledging threads, in the
// side-by-side bench).
const streamWorkers = 32

// maxRequestSize bounds a request: a batch of the largest messages the
// SDKs send (their own limit is 2 MiB a call by default; bodies up to the
// broker's maxMessageSize, 4 MiB, and a little room).
const maxRequestSize = 130 << 20

// Name names the door in the broker's logs.
func (d *Door) Name() string { return "grpc" }

// Start listens and serves in the background.
func (d *Door) Start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return errors.New("grpcdoor: closed")
	}
	if d.mu.ln != nil {
		return errors.New("grpcdoor: already started")
	}
	ln := d.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", d.cfg.ListenAddr); err != nil {
			return fmt.Errorf("grpcdoor: listen: %w", err)
		}
	}
	adv, err := d.advertise(ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return err
	}
	d.mu.ln, d.mu.advertise = ln, adv
	d.wg.Add(3)
	go func() {
		defer d.wg.Done()
		// Serve returns when StopAccepting or Close closes the listener.
		_ = d.srv.Serve(ln)
	}()
	go func() {
		defer d.wg.Done()
		periodic.Run(d.stop, sweepInterval, d.sessions.sweep)
	}()
	go func() {
		defer d.wg.Done()
		d.renew.loop(d.stop)
	}()
	return nil
}

func (d *Door) advertise(listening string) (netip.AddrPort, error) {
	if d.cfg.Advertise != nil {
		return d.cfg.Advertise(d.cfg.AdvertiseAddr, listening)
	}
	addr := d.cfg.AdvertiseAddr
	if addr == "" {
		addr = listening
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("grpcdoor: advertise address %q: %w", addr, err)
	}
	return ap, nil
}

// Addr is the address the door listens on, "" before Start.
func (d *Door) Addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.ln == nil {
		return ""
	}
	return d.mu.ln.Addr().String()
}

// AdvertisedAddr is the address routes hand out, "" before Start.
func (d *Door) AdvertisedAddr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.mu.advertise.IsValid() {
		return ""
	}
	return d.mu.advertise.String()
}

// StopAccepting refuses new connections; open ones are served on, so
// held receives are answered as the core drains.
func (d *Door) StopAccepting() {
	d.mu.Lock()
	ln := d.mu.ln
	d.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
}

// Close ends every stream and connection and waits for the handlers and
// the door's own goroutines.
func (d *Door) Close() error {
	if !latch.Set(&d.mu, &d.mu.closed) {
		return nil
	}
	d.StopAccepting()
	close(d.stop)
	d.srv.Stop()
	d.wg.Wait()
	return nil
}

// endpoints is the door's advertised address as routes give it.
func (d *Door) endpoints() *v2.Endpoints {
	d.mu.Lock()
	adv := d.mu.advertise
	d.mu.Unlock()
	return endpointsOf(adv.String())
}

// endpointsOf is an "ip:port" address as a route's Endpoints.
func endpointsOf(addr string) *v2.Endpoints {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		host, port, _ := net.SplitHostPort(addr)
		var p int
		fmt.Sscan(port, &p)
		return &v2.Endpoints{Scheme: v2.AddressScheme_DOMAIN_NAME, Addresses: []*v2.Address{{Host: host, Port: int32(p)}}}
	}
	scheme := v2.AddressScheme_IPv4
	if ap.Addr().Is6() && !ap.Addr().Is4In6() {
		scheme = v2.AddressScheme_IPv6
	}
	return &v2.Endpoints{Scheme: scheme, Addresses: []*v2.Address{{Host: ap.Addr().Unmap().String(), Port: int32(ap.Port())}}}
}
