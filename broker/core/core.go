package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/consumercall"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/broker/filter"
	"github.com/runnelmq/runnel/broker/lock"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/internal/latch"
	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("core: closed")

// clientScanInterval is how often idle clients and stale locks are swept
// (RocketMQ ClientHousekeepingService: 10 s).
const clientScanInterval = 10 * time.Second

// Config is what the core needs of the broker's configuration. The broker
// fills it from its own Config, where each field is documented with its
// RocketMQ key and default; zero values are not defaulted here.
type Config struct {
	BrokerName, ClusterName string
	AutoCreateTopicEnable   bool
	DefaultTopicQueueNums   int
	// MaxMessageSize caps a message body.
	MaxMessageSize   int
	FileReservedTime time.Duration
	// MaxSuspend caps how long a pull is held.
	MaxSuspend               time.Duration
	OffsetPersistInterval    time.Duration
	ChannelExpiry            time.Duration
	LockMaxLiveTime          time.Duration
	ConsumerCallTimeout      time.Duration
	TransactionTimeout       time.Duration
	TransactionCheckMax      int
	TransactionCheckInterval time.Duration
	DelayLevels              due.Levels
	// TimerMaxDelay is the longest a timer message may wait; zero means
	// due.DefaultTimerMaxDelay.
	TimerMaxDelay time.Duration
	// BrokerPermission is the broker's perm (brokerPermission); 0 means
	// read and write. MaxMessageSize, TimerMaxDelay and BrokerPermission
	// are the initial Runtime: read them through Core.Runtime.
	BrokerPermission int
	// EnablePropertyFilter allows SQL92 subscriptions; FilterSupportRetry
	// filters a group's %RETRY% queue with its SQL92 subscriptions too.
	EnablePropertyFilter, FilterSupportRetry bool
	// SlaveReadEnable (slaveReadEnable) lets a replicated group's slaves
	// serve pulls; without it they answer PULL_RETRY_IMMEDIATELY with the
	// master suggested. ConsumeSlowlyBytes is the backlog past which the
	// master suggests slave WhichBrokerWhenConsumeSlowly (Java: 40% of the
	// machine's memory); 0 never suggests one.
	SlaveReadEnable    bool
	ConsumeSlowlyBytes int64
	// Now is the clock of everything that expires.
	Now    func() time.Time
	Logger *slog.Logger
	// TopicsChanged is called when the topic table changed. wait is true
	// when the change was asked for by an admin, who is answered only once
	// the hook returns (the broker registers with its name servers then, so
	// the route exists when the admin hears back); false when the hook
	// should only note it and return at once.
	TopicsChanged func(wait bool)
}

// Core is the broker's behaviour over one store: every front door calls
// it with typed requests and gets typed results or *Error refusals.
type Core struct {
	cfg Config
	log *slog.Logger

	be      Backend
	topics  *topicTable
	groups  *groupTable
	offsets *offsets.Table
	clients *clients.Manager[Channel]
	locks   *lock.Manager
	holds   *longpoll.Table
	// inflight is the POP messages in flight, the master's view of the
	// store's in-flight records (pop*.go).
	inflight *pop.Table
	later    deliverLater
	txn      *transaction.Service
	calls    *consumercall.Caller
	// sqlCache holds compiled SQL92 expressions by their text.
	sqlCache *filter.Cache

	// storeHost is the advertised address, written into stored messages;
	// set once by Start.
	storeHost atomic.Pointer[netip.AddrPort]
	// uniq makes the UNIQ_KEY of messages sent without one, with the store
	// host's address in it; set by Start.
	uniq      atomic.Pointer[message.UniqIDGenerator]
	pullCount atomic.Int64
	popCount  atomic.Int64
	// popSeq turns the queue a pop starts at, and when it reads the retry
	// topic first.
	popSeq atomic.Uint64
	// heldPops counts the pops held now.
	heldPops atomic.Int64
	// groupGetNums counts, per consumer group, the messages pull answers
	// carried (RocketMQ's GROUP_GET_NUMS): group -> *atomic.Int64.
	groupGetNums sync.Map
	// closing makes new pulls answer at once instead of parking.
	closing atomic.Bool
	// rt is the runtime configuration (runtime.go), never nil.
	rt atomic.Pointer[Runtime]
	// forced counts what the store's forced cleaning deleted.
	forced forcedCleans

	mu struct {
		sync.Mutex
		started, draining bool
		// services: delay and timer delivery run (a master's, role.go).
		services bool
	}
	// lockFence is when a new master grants orderly locks again (unix ns;
	// role.go).
	lockFence atomic.Int64
	stop      chan struct{}
	// ctx is cancelled by Drain; it bounds calls to clients.
	ctx    context.Context
	cancel context.CancelFunc
	// bg counts the background loops and the goroutines answering woken
	// pulls; Add happens under mu while !draining.
	bg sync.WaitGroup
}

// newCore makes a core with defaults filled, before its backend.
func newCore(cfg Config) *Core {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TopicsChanged == nil {
		cfg.TopicsChanged = func(bool) {}
	}
	c := &Core{
		cfg:      cfg,
		log:      cfg.Logger,
		offsets:  offsets.New(),
		clients:  clients.New[Channel](clients.Config{ChannelExpiry: cfg.ChannelExpiry}, cfg.Now),
		locks:    lock.New(lock.Config{MaxLiveTime: cfg.LockMaxLiveTime}, cfg.Now),
		holds:    longpoll.New(cfg.Now),
		inflight: pop.NewTable(),
		later:    deliverLater{levels: cfg.DelayLevels},
		sqlCache: filter.NewCache(filter.DefaultCacheSize),
		stop:     make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.rt.Store(&Runtime{
		BrokerPermission: cmp.Or(cfg.BrokerPermission, topicconf.PermRead|topicconf.PermWrite),
		MaxMessageSize:   cfg.MaxMessageSize,
		TimerMaxDelay:    cfg.TimerMaxDelay,
	})
	c.txn = c.newTransactions()
	c.calls = c.newConsumerCalls()
	return c
}

// Open opens the store with sopts (its arrival hook is the core's), loads
// topics and consumer offsets, and creates the system topics that are
// missing. Nothing runs until Start.
func Open(cfg Config, sopts store.Options) (*Core, error) {
	c := newCore(cfg)
	sopts.OnArrival = c.onArrival
	if next := sopts.OnForcedClean; next != nil {
		sopts.OnForcedClean = func(fc store.ForcedClean) { c.onForcedClean(fc); next(fc) }
	} else {
		sopts.OnForcedClean = c.onForcedClean
	}
	st, err := store.Open(sopts)
	if err != nil {
		return nil, err
	}
	c.be = LocalBackend{S: st}
	if err := c.load(); err != nil {
		_ = st.Close()
		return nil, err
	}
	return c, nil
}

// OpenBackend is Open over a backend the caller opened (a replica). Its
// stores' arrival hook must call the core's OnArrival. The core takes
// the backend: Close closes it. A backend that is not the leader yet
// loads what its store holds now; Promote reloads once it leads.
func OpenBackend(cfg Config, be Backend) (*Core, error) {
	c := newCore(cfg)
	c.be = be
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// load reads topics and offsets from the store and, on a master, creates
// the system topics that are missing (a follower gets them from its
// leader's log).
func (c *Core) load() error {
	c.topics = newTopicTable(c.apply, func() int64 { return c.cfg.Now().UnixMilli() })
	c.groups = newGroupTable(c.apply, func() int64 { return c.cfg.Now().UnixMilli() })
	return c.reload()
}

// reload replaces the topic table and the consumer offsets with what the
// store holds: at Open, and when a replica becomes master (its store was
// written by the log while the in-memory tables were not).
func (c *Core) reload() error {
	st := c.store()
	cfgs, err := st.Topics()
	if err != nil {
		return fmt.Errorf("core: load topics: %w", err)
	}
	c.topics.load(cfgs)
	if err := c.groups.load(st); err != nil {
		return err
	}
	if c.be.IsLeader() {
		for _, tc := range systemTopicConfigs(&c.cfg) {
			if _, _, err := c.topics.createIfAbsent(tc); err != nil {
				return err
			}
		}
	}
	var entries []offsets.Entry
	err = st.RangeConsumerOffsets(func(group, topic string, queueID int32, offset int64) bool {
		entries = append(entries, offsets.Entry{Key: offsets.Key{Group: group, Topic: topic, QueueID: queueID}, Offset: offset})
		return true
	})
	if err != nil {
		return fmt.Errorf("core: load consumer offsets: %w", err)
	}
	c.offsets.Replace(entries)
	return c.loadInFlight(st)
}

// Start begins serving with host as the store host of every message
// stored from now on: long-poll expiry, delayed delivery, and the periodic
// loops (offset persistence, client expiry, transaction checks).
func (c *Core) Start(host netip.AddrPort) error {
	c.mu.Lock()
	if c.mu.draining {
		c.mu.Unlock()
		return ErrClosed
	}
	c.storeHost.Store(&host)
	c.uniq.Store(message.NewUniqIDGenerator(host.Addr()))
	c.holds.Start()
	c.mu.started = true
	// A replica starts them in Promote, once its leadership is announced
	// (its store then holds every committed entry, and so the progress the
	// services resume from).
	if _, local := c.be.(LocalBackend); local {
		if err := c.startServicesLocked(); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.mu.Unlock()
	c.spawn(func() { c.every(c.cfg.OffsetPersistInterval, c.persistTick) })
	c.spawn(func() { c.every(clientScanInterval, c.scanTick) })
	c.spawn(func() { c.every(c.cfg.TransactionCheckInterval, c.txCheckTick) })
	return nil
}

// Drain stops the core's own work while the front doors are still open:
// held pulls are answered (inline, so the answers go out before their
// connections close), background loops stop, calls to clients are
// cancelled and delayed delivery stops. New pulls are answered at once.
// Calls keep working against the store until Close.
func (c *Core) Drain() {
	if !latch.Set(&c.mu, &c.mu.draining) {
		return
	}
	c.closing.Store(true)
	c.holds.Close()
	close(c.stop)
	c.cancel()
	c.bg.Wait()
	c.mu.Lock()
	c.stopServicesLocked()
	c.mu.Unlock()
}

// Close drains the core if that was not done, writes the consumer offsets
// changed since the last persist when persist is set (a clean shutdown;
// an abort loses them, as a crash would), and closes the store.
func (c *Core) Close(persist bool) error {
	c.Drain()
	var errs []error
	if persist && c.be.IsLeader() {
		// A replica that lost its majority meanwhile cannot persist: what
		// the group committed before stands, as after a crash.
		if err := c.PersistOffsets(); err != nil && !errors.Is(err, ErrNotMaster) {
			errs = append(errs, err)
		}
	}
	if err := c.be.Close(); err != nil {
		errs = append(errs, fmt.Errorf("core: close store: %w", err))
	}
	return errors.Join(errs...)
}

// spawn runs fn in a goroutine that Drain waits for. Once draining, it
// runs fn inline instead, so work that must happen (an answer to a held
// pull) is never dropped.
func (c *Core) spawn(fn func()) {
	c.mu.Lock()
	if c.mu.draining {
		c.mu.Unlock()
		fn()
		return
	}
	c.bg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.bg.Done()
		fn()
	}()
}

// every runs fn every d until the core drains.
func (c *Core) every(d time.Duration, fn func()) { periodic.Run(c.stop, d, fn) }

func (c *Core) persistTick() {
	if !c.be.IsLeader() {
		return // a slave's offsets are its master's (Promote reloads them)
	}
	if err := c.PersistOffsets(); err != nil {
		c.log.Error("broker: persist consumer offsets", "err", err)
	}
}

// PersistOffsets writes every consumer offset changed since the last call,
// all in one store op and one sync however many changed.
func (c *Core) PersistOffsets() error {
	_, err := c.offsets.Persist(func(es []offsets.Entry) (int, error) {
		commits := make([]store.OffsetCommit, len(es))
		for i, e := range es {
			commits[i] = store.OffsetCommit{Group: e.Group, Topic: e.Topic, QueueID: e.QueueID, Offset: e.Offset}
		}
		if err := c.commitOffsets(commits); err != nil {
			return 0, fmt.Errorf("core: persist %d consumer offsets: %w", len(es), err)
		}
		return len(es), nil
	})
	return err
}

func (c *Core) scanTick() {
	c.ExpireClients()
	c.locks.Sweep()
}

// ExpireClients drops clients silent for ChannelExpiry and notifies the
// groups that changed. The scan loop calls it every 10 s; tests call it
// after moving their clock.
func (c *Core) ExpireClients() {
	for _, g := range c.clients.ExpireIdle() {
		c.notifyGroup(g)
	}
}

// OnArrival is the store's arrival hook, for a backend's stores
// (OpenBackend): it wakes the pulls held on the queue.
func (c *Core) OnArrival(topic string, queueID int32, maxOffset int64) {
	c.onArrival(topic, queueID, maxOffset)
}

// onArrival is the store's arrival hook: wake the pulls held on the queue.
func (c *Core) onArrival(topic string, queueID int32, maxOffset int64) {
	c.holds.Notify(longpoll.Key{Topic: topic, QueueID: queueID}, maxOffset)
	c.dueArrived(topic)
}

// ChannelClosed drops a closed connection's clients and notifies their
// groups. It must not block: front doors call it from their transport.
func (c *Core) ChannelClosed(id uint64) {
	groups := c.clients.ConnClosed(id)
	if len(groups) == 0 {
		return
	}
	c.spawn(func() {
		for _, g := range groups {
			c.notifyGroup(g)
		}
	})
}

// host returns the store host (the zero address before Start).
func (c *Core) host() netip.AddrPort {
	if h := c.storeHost.Load(); h != nil {
		return *h
	}
	return netip.AddrPort{}
}

// newUniqID returns a fresh UNIQ_KEY.
func (c *Core) newUniqID() string {
	if g := c.uniq.Load(); g != nil {
		return g.Next()
	}
	return message.NewUniqID()
}

// Store returns the message store (for tests and tools).
func (c *Core) Store() *store.Store { return c.store() }

// HeldPulls returns how many pulls are held now.
func (c *Core) HeldPulls() int { return c.holds.Len() }

// ConsumerIDs returns the client ids registered in a consumer group.
func (c *Core) ConsumerIDs(group string) []string { return c.clients.ConsumerIDs(group) }

// LockOwner returns the client holding a live orderly lock on mq in group.
func (c *Core) LockOwner(group string, mq message.Queue) (clientID string, ok bool) {
	return c.locks.Owner(group, toLockQueues([]message.Queue{mq})[0])
}

// ConsumerOffset returns a group's committed offset on a queue.
func (c *Core) ConsumerOffset(group, topic string, queueID int32) (int64, bool) {
	return c.offsets.Get(offsets.Key{Group: group, Topic: topic, QueueID: queueID})
}

// PullRequests returns how many pull requests the core has served.
func (c *Core) PullRequests() int64 { return c.pullCount.Load() }

// MessagesPulled returns how many messages pull answers have carried to a
// consumer group.
func (c *Core) MessagesPulled(group string) int64 {
	if n, ok := c.groupGetNums.Load(group); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

func (c *Core) countPulled(group string, n int) {
	v, ok := c.groupGetNums.Load(group)
	if !ok {
		v, _ = c.groupGetNums.LoadOrStore(group, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(int64(n))
}

// HeldOffsets returns the offsets the pulls held on a queue wait past
// (for tests).
func (c *Core) HeldOffsets(topic string, queueID int32) []int64 {
	return c.holds.Offsets(longpoll.Key{Topic: topic, QueueID: queueID})
}

// CompiledExpressions returns how many SQL92 expressions are cached.
func (c *Core) CompiledExpressions() int { return c.sqlCache.Len() }

// ExpireHeldPulls answers the held pulls whose suspend time has passed on
// the core's clock. The long-poll loop does it as their deadlines come;
// tests call it after moving their clock.
func (c *Core) ExpireHeldPulls() { c.holds.ExpireDue(c.cfg.Now()) }
