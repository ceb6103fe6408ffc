// Package registration owns a broker's registration with its name servers
// (RocketMQ BrokerController.registerBrokerAll and
// registerIncrementBrokerData): REGISTER_BROKER with the whole topic table
// every Interval and to a name server that may have lost it, only the
// changed topics after a change (incremental.go), and UNREGISTER_BROKER on
// a clean shutdown.
//
// Invariants:
//   - every topic change is registered: at once and before the admin's
//     answer for admin changes (ChangesAndWait), soon after for the rest
//     (Kick); a registration carries the changed topics alone unless a
//     name server needs the whole table (the periodic round, a deletion, a
//     writability change, a failed or reconnected name server);
//   - registrations are serial, so the last one a name server applies
//     carries the broker's current id (a role change and a round race
//     otherwise);
//   - a table says the broker's own permission and its store's
//     writability in every topic's perm, as Java registers them.
//
// Lifecycle: New, Start (the host is known: the whole table goes out, the
// loop runs), Stop (the loop ends, waiters are released), Unregister,
// Close (the name server connections close).
package registration

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/internal/latch"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/topicconf"
)

// Broker is what a Registrar reads of the broker it registers, at each
// registration.
type Broker interface {
	// Topics returns a copy of the topic table and its version.
	Topics() (map[string]topicconf.Config, topicconf.DataVersion)
	// TakeTopicChanges returns the topics changed since the last call,
	// whether any was deleted, and the table's version (core.Core's).
	TakeTopicChanges() (changed map[string]topicconf.Config, removed bool, version topicconf.DataVersion)
	// Writable says whether the store takes writes now.
	Writable() bool
	// Permission is the broker's own perm (brokerPermission).
	Permission() int
	// ID is the brokerId to register now: 0 for the master.
	ID() int64
}

// Config configures a Registrar. NamesrvAddrs may be empty (nothing is
// registered); Broker is required.
type Config struct {
	NamesrvAddrs            []string
	BrokerName, ClusterName string
	// Interval is how often the whole table goes to every name server
	// (registerNameServerPeriod). Default 30 s.
	Interval time.Duration
	// TLS, if set, is used for the name server connections.
	TLS *tls.Config
	// Interceptors sign the broker's requests (its credentials).
	Interceptors []remoting.ClientInterceptor
	Logger       *slog.Logger
	Broker       Broker
}

// Registrar keeps one broker registered with its name servers.
type Registrar struct {
	cfg Config
	log *slog.Logger
	ns  *remoting.Client

	host atomic.Pointer[netip.AddrPort]
	// regMu serialises registrations (see the package doc).
	regMu sync.Mutex
	// kick asks the loop to register the changes now.
	kick chan struct{}
	// nsDown holds the name servers whose last registration failed
	// (address -> true), so a failure is logged once.
	nsDown sync.Map
	// inc is the state of registering only changed topics.
	inc incrementalReg

	mu struct {
		sync.Mutex
		started, stopped bool
	}
	stop   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup
}

// New returns a Registrar that registers nothing until Start.
func New(cfg Config) *Registrar {
	if cfg.Interval <= 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Registrar{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.ns = remoting.NewClient(remoting.ClientConfig{Logger: cfg.Logger, TLS: cfg.TLS, OnClose: r.namesrvConnClosed, Interceptors: cfg.Interceptors})
	return r
}

// Start registers the whole table with every name server, as the broker
// at host, and starts the loop. A failed name server is retried by the
// loop.
func (r *Registrar) Start(host netip.AddrPort) {
	r.mu.Lock()
	if r.mu.started || r.mu.stopped {
		r.mu.Unlock()
		return
	}
	r.mu.started = true
	r.host.Store(&host)
	r.bg.Add(1)
	r.mu.Unlock()
	r.RegisterAll()
	go func() {
		defer r.bg.Done()
		r.loop()
	}()
}

// Kick asks for a registration of the changes now. It does not wait: the
// loop coalesces kicks that arrive while it registers.
func (r *Registrar) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// RegisterAll registers the whole table with every name server now (a
// role or permission change), and has the loop retry those that failed.
func (r *Registrar) RegisterAll() {
	if r.registerAll(r.ctx) > 0 {
		r.Kick()
	}
}

// Stop ends the loop and releases the callers waiting in ChangesAndWait.
// Safe to call more than once.
func (r *Registrar) Stop() {
	if !latch.Set(&r.mu, &r.mu.stopped) {
		return
	}
	close(r.stop)
	r.cancel()
	r.bg.Wait()
}

// Close stops the loop if need be and closes the name server connections.
func (r *Registrar) Close() error {
	r.Stop()
	return r.ns.Close()
}

// loop registers with every name server each Interval (the whole table),
// whenever the topic table changes (Kick: only the changed topics) or a
// name server connection closes, and again soon, with backoff, while any
// fails.
func (r *Registrar) loop() {
	t := time.NewTimer(r.cfg.Interval)
	defer t.Stop()
	retry := registerRetryMin
	retrying := false // the timer is a retry's, not the interval's
	for {
		whole := false
		select {
		case <-r.stop:
			return
		case <-t.C:
			whole = !retrying
		case <-r.kick:
		}
		next := r.cfg.Interval
		var failed int
		if whole {
			failed = r.registerAll(r.ctx)
		} else {
			failed = r.registerChanges(r.ctx)
		}
		if retrying = failed > 0; retrying {
			next, retry = min(retry, next), min(retry*2, registerRetryMax)
		} else {
			retry = registerRetryMin
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}
