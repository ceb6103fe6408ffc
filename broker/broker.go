package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// ErrClosed is returned by Start after Close, and by Close the second time.
var ErrClosed = errors.New("broker: closed")

// Broker is one RocketMQ broker process: the core (broker/core) over its
// store, the remoting front door that adapts RocketMQ's wire onto it, and
// the registration with the name servers.
type Broker struct {
	cfg Config
	log *slog.Logger

	core *core.Core
	srv  *remoting.Server
	ns   *remoting.Client
	// metrics is the Prometheus exporter (exporter.go).
	metrics *metrics.Metrics
	acl     *acl.Checker  // nil without ACLEnable
	auth    *auth.Manager // ACL 2.0's users and ACLs; always there (admin requests)
	// node is the raft node of a replicated group (nil on a single
	// broker); master says it is announced leader (replicated.go), term
	// the raft term of its last role change.
	node   *replica.Node
	repl   replicated
	master atomic.Bool
	term   atomic.Uint64

	// storeHost is the advertised address, registered with name servers;
	// set once by Start.
	storeHost atomic.Pointer[netip.AddrPort]
	// regMu serialises registrations, so the last one a name server
	// applies carries the current brokerId (a role change and a kicked
	// registration race otherwise).
	regMu sync.Mutex
	// regKick asks the registration loop to register now.
	regKick chan struct{}
	// rtMu serialises runtime config updates (runtime_config.go); rtSaved
	// is what RuntimeConfigFile holds. storeMaxBody is the largest
	// maxMessageSize the store was opened for.
	rtMu         sync.Mutex
	rtSaved      map[string]string
	storeMaxBody int
	// nsDown holds the name servers whose last registration failed
	// (address -> true), so a failure is logged once.
	nsDown sync.Map
	// inc is the state of registering only changed topics.
	inc incrementalReg

	mu struct {
		sync.Mutex
		started bool
		closed  bool
	}
	stop chan struct{}
	// ctx is cancelled by Close; it bounds calls to name servers.
	ctx    context.Context
	cancel context.CancelFunc
	// bg counts the registration loop.
	bg sync.WaitGroup
}

// New opens the store in cfg.StoreDir, loads topics and consumer offsets,
// and prepares the server. Nothing listens until Start.
func New(cfg Config) (*Broker, error) {
	cfg.ensureDefaults()
	saved, err := loadRuntimeConfig(&cfg)
	if err != nil {
		return nil, err
	}
	if len(saved) > 0 {
		cfg.Logger.Info("broker: runtime config applied over the configuration", "file", RuntimeConfigFile, "keys", protocol.FormatProperties(saved))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	levels, err := due.ParseLevels(cfg.MessageDelayLevel)
	if err != nil { // Validate parses them too; kept for a clear error
		return nil, fmt.Errorf("%w: MessageDelayLevel: %v", ErrBadConfig, err)
	}
	tlsMode, serverTLS, err := cfg.TLS.ServerTLS()
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	nsTLS, err := cfg.TLS.ClientTLS()
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	b := &Broker{
		cfg:     cfg,
		log:     cfg.Logger.With("broker", cfg.BrokerName),
		regKick: make(chan struct{}, 1),
		stop:    make(chan struct{}),
		rtSaved: saved,
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	sopts := store.DefaultOptions(cfg.StoreDir)
	sopts.FlushMode = cfg.FlushMode
	sopts.FileReservedTime = cfg.FileReservedTime
	// The store limit covers the whole record; the body limit is checked
	// by the core, which answers Java's code and remark. It leaves room to
	// raise maxMessageSize at run time up to Java's default.
	b.storeMaxBody = max(cfg.MaxMessageSize, minStoreMessageSize)
	sopts.MaxMessageSize = b.storeMaxBody + storeRecordSlack
	sopts.Now = cfg.Now
	sopts.DiskMaxUsedSpaceRatio = cfg.DiskMaxUsedSpaceRatio
	sopts.DiskSpaceCleanForciblyRatio = cfg.DiskSpaceCleanForciblyRatio
	sopts.DiskSpaceWarningLevelRatio = cfg.DiskSpaceWarningLevelRatio
	if cfg.StoreOptions != nil {
		cfg.StoreOptions(&sopts)
	}
	// Register (not) writable as soon as the store starts (stops)
	// refusing writes for its disk.
	onDisk := sopts.OnDiskFull
	sopts.OnDiskFull = func(full bool) {
		if onDisk != nil {
			onDisk(full)
		}
		b.kickRegister()
	}
	var c *core.Core
	if cfg.Replication.Enable {
		c, err = b.openReplicated(b.coreConfig(levels), sopts)
	} else {
		c, err = core.Open(b.coreConfig(levels), sopts)
	}
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.core = c
	if cfg.ACLEnable {
		if b.acl, err = acl.Open(acl.Options{File: cfg.ACLFile, Logger: b.log}); err != nil {
			_ = c.Close(false)
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	authCfg := cfg.Auth
	authCfg.Cluster, authCfg.Logger = cfg.ClusterName, b.log
	authCfg.InitLater = b.node != nil // a group's master creates them (watchLeadership)
	if b.auth, err = auth.Open(authCfg, authStore{c}); err != nil {
		b.closeACL()
		_ = c.Close(false)
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.newMetrics()
	srv, err := remoting.NewServer(remoting.ServerConfig{
		Addr:         cfg.ListenAddr,
		Transport:    cfg.Transport,
		TLSMode:      tlsMode,
		TLS:          serverTLS,
		OnClose:      func(conn *remoting.Conn) { b.core.ChannelClosed(conn.ID()) },
		Logger:       b.log,
		Interceptors: b.interceptors(),
		// The broker's calls to clients sign as its calls to name servers do.
		OutInterceptors: b.credentials().Interceptor(),
	})
	if err != nil {
		b.closeACL()
		_ = c.Close(false)
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.srv = srv
	b.registerHandlers()
	b.ns = remoting.NewClient(remoting.ClientConfig{Logger: b.log, TLS: nsTLS, OnClose: b.namesrvConnClosed, Interceptors: b.credentials().Interceptor()})
	return b, nil
}

// coreConfig is what the core takes of the broker's config.
func (b *Broker) coreConfig(levels due.Levels) core.Config {
	c := b.cfg
	return core.Config{
		BrokerName: c.BrokerName, ClusterName: c.ClusterName,
		AutoCreateTopicEnable:    c.AutoCreateTopicEnable,
		DefaultTopicQueueNums:    c.DefaultTopicQueueNums,
		MaxMessageSize:           c.MaxMessageSize,
		FileReservedTime:         c.FileReservedTime,
		MaxSuspend:               c.MaxSuspend,
		OffsetPersistInterval:    c.OffsetPersistInterval,
		ChannelExpiry:            c.ChannelExpiry,
		LockMaxLiveTime:          c.LockMaxLiveTime,
		ConsumerCallTimeout:      c.ConsumerCallTimeout,
		TransactionTimeout:       c.TransactionTimeout,
		TransactionCheckMax:      c.TransactionCheckMax,
		TransactionCheckInterval: c.TransactionCheckInterval,
		DelayLevels:              levels,
		TimerMaxDelay:            c.TimerMaxDelay,
		BrokerPermission:         c.BrokerPermission,
		EnablePropertyFilter:     c.EnablePropertyFilter,
		SlaveReadEnable:          c.SlaveReadEnable,
		ConsumeSlowlyBytes:       consumeSlowlyBytes(),
		FilterSupportRetry:       c.FilterSupportRetry,
		Now:                      c.Now,
		Logger:                   b.log,
		TopicsChanged: func(wait bool) {
			if wait {
				b.registerChangesAndWait()
			} else {
				b.kickRegister()
			}
		},
	}
}

// Start listens, registers with the name servers and starts the background
// loops.
func (b *Broker) Start() error {
	b.mu.Lock()
	switch {
	case b.mu.closed:
		b.mu.Unlock()
		return ErrClosed
	case b.mu.started:
		b.mu.Unlock()
		return errors.New("broker: already started")
	}
	b.mu.started = true
	b.mu.Unlock()

	if err := b.srv.Start(); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	host, err := resolveAdvertise(b.cfg.AdvertiseAddr, b.srv.Addr())
	if err != nil {
		_ = b.srv.Close()
		return err
	}
	b.storeHost.Store(&host)
	if err := b.core.Start(host); err != nil {
		_ = b.srv.Close()
		return fmt.Errorf("broker: %w", err)
	}
	if err := b.metrics.Start(); err != nil {
		_ = b.srv.Close()
		return fmt.Errorf("broker: metrics: %w", err)
	}
	b.registerAll(b.ctx)
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		b.registerLoop()
	}()
	if b.node != nil {
		b.bg.Add(1)
		go func() {
			defer b.bg.Done()
			b.watchLeadership()
		}()
		b.bg.Add(1)
		go func() {
			defer b.bg.Done()
			b.retainLoop()
		}()
	}
	b.log.Info("broker: serving", "addr", b.srv.Addr(), "advertise", host.String(),
		"cluster", b.cfg.ClusterName, "namesrv", b.cfg.NamesrvAddrs, "store", b.cfg.StoreDir)
	return nil
}

// Addr returns the address the server listens on, "" before Start.
func (b *Broker) Addr() string { return b.srv.Addr() }

// AdvertisedAddr returns the address clients are told to use, "" before
// Start.
func (b *Broker) AdvertisedAddr() string {
	if h := b.storeHost.Load(); h != nil {
		return h.String()
	}
	return ""
}

// Core returns the broker's core, the behaviour every front door calls.
func (b *Broker) Core() *core.Core { return b.core }

// Store returns the broker's message store (for tests and tools).
func (b *Broker) Store() *store.Store { return b.core.Store() }

// Config returns the configuration in force, defaults filled in and the
// runtime changes (updateBrokerConfig) applied.
func (b *Broker) Config() Config {
	c := b.cfg
	rt := b.core.Runtime()
	c.BrokerPermission, c.MaxMessageSize, c.TimerMaxDelay = rt.BrokerPermission, rt.MaxMessageSize, rt.TimerMaxDelay
	return c
}

// Run starts the broker and serves until ctx is done, then closes it.
func (b *Broker) Run(ctx context.Context) error {
	if err := b.Start(); err != nil {
		_ = b.Close()
		return err
	}
	<-ctx.Done()
	return b.Close()
}

// Close shuts the broker down in a fixed order: the core drains (held
// pulls are answered while their connections are still open, its loops
// stop); the registration loop stops; the server closes every connection
// and waits for its handlers; the broker unregisters from the name
// servers; the core persists consumer offsets and closes the store last,
// since everything before may still read or write it.
func (b *Broker) Close() error { return b.shutdown(true) }

// Abort stops the broker the way a crash would, as far as clients can
// tell: connections drop, consumer offsets changed since the last periodic
// persist are lost and the name servers are not told. The store still
// closes cleanly (what it acknowledged is durable either way). For tests.
func (b *Broker) Abort() error { return b.shutdown(false) }

func (b *Broker) shutdown(clean bool) error {
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	b.mu.closed = true
	started := b.mu.started
	b.mu.Unlock()

	b.core.Drain()
	close(b.stop)
	b.cancel()
	b.bg.Wait()
	var errs []error
	// Scrapes read the store: the exporter stops before it closes.
	if err := b.metrics.Close(); err != nil {
		errs = append(errs, fmt.Errorf("broker: close metrics: %w", err))
	}
	if started {
		if err := b.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("broker: close server: %w", err))
		}
		if clean {
			b.unregisterAll()
		}
	}
	_ = b.ns.Close()
	b.closeACL()
	if err := b.core.Close(clean); err != nil {
		errs = append(errs, fmt.Errorf("broker: %w", err))
	}
	b.log.Info("broker: closed")
	return errors.Join(errs...)
}

// credentials are the account the broker signs its own requests with:
// accessKey/secretKey, else ACL 2.0's inner client account.
func (b *Broker) credentials() acl.Credentials {
	if !b.cfg.Credentials.Empty() {
		return b.cfg.Credentials
	}
	return b.cfg.Auth.InnerCredentials
}

// closeACL stops the ACL file watcher, if any.
func (b *Broker) closeACL() {
	if b.acl != nil {
		_ = b.acl.Close()
	}
}

// ExpireClients drops clients silent for ChannelExpiry and notifies the
// groups that changed (tests call it after moving their clock).
func (b *Broker) ExpireClients() { b.core.ExpireClients() }

// ConsumerIDs returns the client ids registered in a consumer group.
func (b *Broker) ConsumerIDs(group string) []string { return b.core.ConsumerIDs(group) }

// LockOwner returns the client holding a live orderly lock on mq in group
// (LOCK_BATCH_MQ), for tests and tools.
func (b *Broker) LockOwner(group string, mq protocol.MessageQueue) (clientID string, ok bool) {
	return b.core.LockOwner(group, mq)
}

// ConsumerOffset returns a group's committed offset on a queue.
func (b *Broker) ConsumerOffset(group, topic string, queueID int32) (int64, bool) {
	return b.core.ConsumerOffset(group, topic, queueID)
}

// PullRequests returns how many pull requests the broker has received.
func (b *Broker) PullRequests() int64 { return b.core.PullRequests() }

// MessagesPulled returns how many messages pull answers have carried to a
// consumer group since the broker started.
func (b *Broker) MessagesPulled(group string) int64 { return b.core.MessagesPulled(group) }

// DelayProgress returns, per delay level, the next queue offset of the
// schedule topic still to deliver (for tests and tools).
func (b *Broker) DelayProgress() map[int32]int64 { return b.core.DelayProgress() }

// CheckTransactions runs one transaction check pass now (tests call it
// after moving their clock).
func (b *Broker) CheckTransactions() (TxCheckResult, error) { return b.core.CheckTransactions() }

// TxCheckResult says what one transaction check pass did.
type TxCheckResult = transaction.CheckResult
