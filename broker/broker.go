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
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/grpcdoor"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/broker/registration"
	"github.com/runnelmq/runnel/broker/remotingdoor"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// ErrClosed is returned by Start after Close, and by Close the second time.
var ErrClosed = errors.New("broker: closed")

// Broker is one RocketMQ broker process: its front doors over the core
// (broker/core) and its store, and the registration with the name servers.
type Broker struct {
	cfg config.Config
	log *slog.Logger

	core *core.Core
	// doors are the ways in, in the order they start; remoting is the
	// first of them, every broker's.
	doors    []Door
	remoting *remotingdoor.Door
	grpc     *grpcdoor.Door // nil when the broker serves no gRPC door
	reg      *registration.Registrar
	// metrics is the Prometheus exporter (exporter.go).
	metrics *metrics.Metrics
	acl     *acl.Checker  // nil without ACLEnable
	auth    *auth.Manager // ACL 2.0's users and ACLs; always there (admin requests)
	// guard is every door's access control: plain ACL, then ACL 2.0 when
	// enabled; empty when both are off.
	guard acl.Guard
	// tlsMode is tls.server.mode (remoting.TLSDisabled, ...).
	tlsMode string
	// node is the raft node of a replicated group (nil on a single
	// broker) and group its backend; master says it is the announced
	// leader (replicated.go), term the raft term of its last role change.
	node   *replica.Node
	group  *replica.Backend
	master atomic.Bool
	term   atomic.Uint64

	// storeHost is the remoting door's advertised address, registered with
	// name servers and written into stored messages; set once by Start.
	storeHost atomic.Pointer[netip.AddrPort]
	// rtMu serialises runtime config updates (runtime_config.go); rtSaved
	// is what config.RuntimeConfigFile holds. storeMaxBody is the largest
	// maxMessageSize the store was opened for.
	rtMu         sync.Mutex
	rtSaved      map[string]string
	storeMaxBody int

	mu struct {
		sync.Mutex
		started bool
		closed  bool
	}
	stop chan struct{}
	// bg counts the process's own loops (a group node's leadership watch
	// and retention, the idle memory release).
	bg sync.WaitGroup
	// memReleases counts idle memory releases (idlemem.go).
	memReleases atomic.Int64
}

// New opens the store in cfg.StoreDir, loads topics and consumer offsets,
// and prepares the doors. Nothing listens until Start. Doors beyond the
// remoting door are added with AddDoor before Start.
func New(cfg config.Config) (*Broker, error) {
	cfg.EnsureDefaults()
	saved, err := config.LoadRuntime(&cfg)
	if err != nil {
		return nil, err
	}
	if len(saved) > 0 {
		cfg.Logger.Info("broker: runtime config applied over the configuration", "file", config.RuntimeConfigFile, "keys", protocol.FormatProperties(saved))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	levels, err := due.ParseLevels(cfg.MessageDelayLevel)
	if err != nil { // Validate parses them too; kept for a clear error
		return nil, fmt.Errorf("%w: MessageDelayLevel: %v", config.ErrBadConfig, err)
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
		stop:    make(chan struct{}),
		rtSaved: saved,
		tlsMode: tlsMode,
	}
	b.reg = registration.New(registration.Config{
		NamesrvAddrs: cfg.NamesrvAddrs, BrokerName: cfg.BrokerName, ClusterName: cfg.ClusterName,
		Interval: cfg.RegisterInterval, TLS: nsTLS, Interceptors: b.credentials().Interceptor(),
		Logger: b.log, Broker: registered{b},
	})
	sopts := store.DefaultOptions(cfg.StoreDir)
	sopts.FlushMode = cfg.FlushMode
	sopts.FileReservedTime = cfg.FileReservedTime
	// The store limit covers the whole record; the body limit is checked
	// by the core, which answers Java's code and remark. It leaves room to
	// raise maxMessageSize at run time up to Java's default.
	b.storeMaxBody = max(cfg.MaxMessageSize, config.MinStoreMessageSize)
	sopts.MaxMessageSize = b.storeMaxBody + config.StoreRecordSlack
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
		b.reg.Kick()
	}
	// The store's root is its owner's alone (a replicated node keeps its
	// raft log and snapshots beside its stores there).
	if err := store.PrivateDir(sopts.FS, cfg.StoreDir); err != nil {
		_ = b.reg.Close()
		return nil, fmt.Errorf("broker: store directory: %w", err)
	}
	var c *core.Core
	if cfg.Replication.Enable {
		c, err = b.openReplicated(b.coreConfig(levels), sopts)
	} else {
		c, err = core.Open(b.coreConfig(levels), sopts)
	}
	if err != nil {
		_ = b.reg.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.core = c
	fail := func(err error) (*Broker, error) {
		b.closeACL()
		_ = b.reg.Close()
		_ = c.Close(false)
		return nil, fmt.Errorf("broker: %w", err)
	}
	if cfg.ACLEnable {
		if b.acl, err = acl.Open(acl.Options{File: cfg.ACLFile, Logger: b.log}); err != nil {
			return fail(err)
		}
	}
	authCfg := cfg.Auth
	authCfg.Logger = b.log
	authCfg.InitLater = b.node != nil // a group's master creates them (watchLeadership)
	if b.auth, err = auth.Open(authCfg, authStore{c}); err != nil {
		return fail(err)
	}
	b.newMetrics()
	if b.acl != nil {
		b.guard = append(b.guard, b.acl)
	}
	if b.auth.Enabled() {
		b.guard = append(b.guard, b.auth)
	}
	rcfg := remotingdoor.Config{
		Core: c, Process: process{b}, Guard: b.guard, Cluster: cfg.ClusterName, Auth: b.auth, Logger: b.log,
		Server: remotingServerConfig(cfg, tlsMode, serverTLS, b.credentials(), b.log),
	}
	if cfg.Metrics.Enabled() {
		ic := b.metrics.Interceptor()
		rcfg.Metrics = &ic
	}
	if b.remoting, err = remotingdoor.New(rcfg); err != nil {
		return fail(err)
	}
	b.doors = append(b.doors, b.remoting)
	if err := b.newGRPCDoor(serverTLS); err != nil {
		return fail(err)
	}
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
				b.reg.ChangesAndWait()
			} else {
				b.reg.Kick()
			}
		},
	}
}

// AddDoor adds a front door beside the remoting door, before Start: it
// starts after the doors before it, stops accepting and closes with them
// (Close's order). Adding a door touches no other door.
func (b *Broker) AddDoor(d Door) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.started || b.mu.closed {
		return errors.New("broker: doors are added before Start")
	}
	b.doors = append(b.doors, d)
	return nil
}

// Start opens the doors, registers with the name servers and starts the
// background loops.
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

	if err := b.remoting.Start(); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	host, err := config.Advertise(b.cfg.AdvertiseAddr, b.remoting.Addr())
	if err != nil {
		_ = b.remoting.Close()
		return err
	}
	b.storeHost.Store(&host)
	for _, d := range b.doors[1:] {
		if err := d.Start(); err != nil {
			b.closeDoors()
			return fmt.Errorf("broker: %s door: %w", d.Name(), err)
		}
	}
	if err := b.core.Start(host); err != nil {
		b.closeDoors()
		return fmt.Errorf("broker: %w", err)
	}
	if err := b.metrics.Start(); err != nil {
		b.closeDoors()
		return fmt.Errorf("broker: metrics: %w", err)
	}
	b.reg.Start(host)
	b.spawn(b.releaseIdleMemory)
	if b.node != nil {
		b.spawn(b.watchLeadership)
		b.spawn(func() { b.group.Retain(b.stop, b.master.Load, b.cfg.Now, b.log) })
	}
	attrs := []any{"addr", b.remoting.Addr(), "advertise", host.String(), "cluster", b.cfg.ClusterName,
		"namesrv", b.cfg.NamesrvAddrs, "store", b.cfg.StoreDir}
	for _, d := range b.doors[1:] {
		attrs = append(attrs, d.Name(), d.Addr())
	}
	b.log.Info("broker: serving", attrs...)
	b.warnPlaintext()
	return nil
}

// warnPlaintext warns when access control is on while a door accepts
// plaintext connections on an address reachable from other hosts: signed
// requests can be replayed there (docs/security.md).
func (b *Broker) warnPlaintext() {
	if !b.guard.Enabled() || b.tlsMode == remoting.TLSEnforcing {
		return
	}
	var exposed []string
	for _, d := range b.doors {
		if acl.Reachable(d.Addr()) {
			exposed = append(exposed, d.Name()+" "+d.Addr())
		}
	}
	if len(exposed) > 0 {
		b.log.Warn(acl.ReplayWarning, "doors", exposed, "tls.server.mode", b.tlsMode)
	}
}

func (b *Broker) spawn(fn func()) {
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		fn()
	}()
}

// Addr returns the address the remoting door listens on, "" before Start.
func (b *Broker) Addr() string { return b.remoting.Addr() }

// AdvertisedAddr returns the address remoting clients are told to use, ""
// before Start.
func (b *Broker) AdvertisedAddr() string {
	if h := b.storeHost.Load(); h != nil {
		return h.String()
	}
	return ""
}

// Doors returns the broker's front doors, the remoting door first.
func (b *Broker) Doors() []Door { return append([]Door(nil), b.doors...) }

// AccessControl is the decision every door asks before serving a request
// (plain ACL, then ACL 2.0, those of them that are on; empty when access
// control is off). A door maps its own requests to acl.Request needs and
// calls Decide (see package acl).
func (b *Broker) AccessControl() acl.Guard { return b.guard }

// Remoting returns the remoting door (tests connect to it in memory).
func (b *Broker) Remoting() *remotingdoor.Door { return b.remoting }

// Core returns the broker's core, the behaviour every front door calls.
func (b *Broker) Core() *core.Core { return b.core }

// Store returns the broker's message store (for tests and tools).
func (b *Broker) Store() *store.Store { return b.core.Store() }

// Config returns the configuration in force, defaults filled in and the
// runtime changes (updateBrokerConfig) applied.
func (b *Broker) Config() config.Config {
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

// Close shuts the broker down in a fixed order:
//  1. every door stops accepting connections (open ones are served on);
//  2. the core drains: held requests are answered while their
//     connections are still open, its loops stop;
//  3. the process's loops stop and the name servers are told: the
//     registration loop ends and the broker unregisters, so clients stop
//     routing here before their connections drop;
//  4. the metrics exporter stops (scrapes read the store);
//  5. every door closes its connections and waits for its handlers;
//  6. the core persists consumer offsets and closes the store last, since
//     everything before may still read or write it.
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

	for _, d := range b.doors {
		d.StopAccepting()
	}
	b.core.Drain()
	close(b.stop)
	b.bg.Wait()
	b.reg.Stop()
	if started && clean {
		b.reg.Unregister()
	}
	var errs []error
	if err := b.metrics.Close(); err != nil {
		errs = append(errs, fmt.Errorf("broker: close metrics: %w", err))
	}
	// Doors are closed started or not: New builds them, and a gRPC door's
	// server runs its stream workers from then on.
	errs = append(errs, b.closeDoors())
	_ = b.reg.Close()
	b.closeACL()
	if err := b.core.Close(clean); err != nil {
		errs = append(errs, fmt.Errorf("broker: %w", err))
	}
	b.log.Info("broker: closed")
	return errors.Join(errs...)
}

// closeDoors closes every door, the last added first.
func (b *Broker) closeDoors() error {
	var errs []error
	for i := len(b.doors) - 1; i >= 0; i-- {
		if err := b.doors[i].Close(); err != nil {
			errs = append(errs, fmt.Errorf("broker: close %s door: %w", b.doors[i].Name(), err))
		}
	}
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
func (b *Broker) LockOwner(group string, mq message.Queue) (clientID string, ok bool) {
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
