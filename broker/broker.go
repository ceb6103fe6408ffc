package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/lock"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/broker/schedule"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// ErrClosed is returned by Start after Close, and by Close the second time.
var ErrClosed = errors.New("broker: closed")

// clientScanInterval is how often idle clients and stale locks are swept
// (RocketMQ ClientHousekeepingService: 10 s).
const clientScanInterval = 10 * time.Second

// Broker serves the RocketMQ protocol over one store.
type Broker struct {
	cfg Config
	log *slog.Logger

	st      *store.Store
	srv     *remoting.Server
	ns      *remoting.Client
	topics  *topicTable
	offsets *offsets.Table
	clients *clients.Manager
	locks   *lock.Manager
	holds   *longpoll.Table
	sched   scheduler // delay levels and delayed delivery (schedule_wire.go)
	txn     txState   // transaction ends and checks (transaction.go, txcheck.go)

	// storeHost is the advertised address, written into stored messages
	// and registered with name servers; set once by Start.
	storeHost atomic.Pointer[netip.AddrPort]
	// pullCount counts PULL_MESSAGE requests received (tests use it to
	// show that idle consumers do not poll).
	pullCount atomic.Int64
	// groupGetNums counts, per consumer group, the messages pull answers
	// carried (RocketMQ's GROUP_GET_NUMS statistic): what the broker sent
	// after its own filtering, which the clients cannot tell apart from
	// their filtering. Group name -> *atomic.Int64.
	groupGetNums sync.Map
	// closing makes new pulls answer at once instead of parking.
	closing atomic.Bool
	// regKick asks the registration loop to register now.
	regKick chan struct{}

	mu struct {
		sync.Mutex
		started bool
		closed  bool
	}
	stop chan struct{}
	// ctx is cancelled by Close; it bounds calls to name servers.
	ctx    context.Context
	cancel context.CancelFunc
	// bg counts the background loops and the goroutines that answer woken
	// pulls and send notifications; Add happens under mu while !closed.
	bg sync.WaitGroup
}

// New opens the store in cfg.StoreDir, loads topics and consumer offsets,
// and prepares the server. Nothing listens until Start.
func New(cfg Config) (*Broker, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	levels, err := schedule.ParseLevels(cfg.MessageDelayLevel)
	if err != nil { // Validate parses them too; kept for a clear error
		return nil, fmt.Errorf("%w: MessageDelayLevel: %v", ErrBadConfig, err)
	}
	b := &Broker{
		cfg:     cfg,
		log:     cfg.Logger.With("broker", cfg.BrokerName),
		offsets: offsets.New(),
		clients: clients.New(clients.Config{ChannelExpiry: cfg.ChannelExpiry}, cfg.Now),
		locks:   lock.New(lock.Config{MaxLiveTime: cfg.LockMaxLiveTime}, cfg.Now),
		holds:   longpoll.New(cfg.Now),
		sched:   scheduler{levels: levels},
		regKick: make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	sopts := store.DefaultOptions(cfg.StoreDir)
	sopts.FlushMode = cfg.FlushMode
	sopts.FileReservedTime = cfg.FileReservedTime
	// The store limit covers the whole record; the body limit is checked
	// by the send handler, which answers Java's code and remark.
	sopts.MaxMessageSize = cfg.MaxMessageSize + 64<<10
	sopts.Clock = cfg.Now
	sopts.OnArrival = b.onArrival
	if cfg.StoreOptions != nil {
		cfg.StoreOptions(&sopts)
	}
	st, err := store.Open(sopts)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.st = st
	if err := b.load(); err != nil {
		_ = st.Close()
		return nil, err
	}
	srv, err := remoting.NewServer(remoting.ServerConfig{
		Addr:      cfg.ListenAddr,
		Transport: cfg.Transport,
		OnClose:   b.onConnClose,
		Logger:    b.log,
	})
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.srv = srv
	b.registerHandlers()
	b.ns = remoting.NewClient(remoting.ClientConfig{Logger: b.log})
	return b, nil
}

// load reads topics and offsets from the store and creates the system
// topics that are missing.
func (b *Broker) load() error {
	b.topics = newTopicTable(b.st, func() int64 { return b.cfg.Now().UnixMilli() })
	cfgs, err := b.st.Topics()
	if err != nil {
		return fmt.Errorf("broker: load topics: %w", err)
	}
	b.topics.load(cfgs)
	for _, c := range systemTopicConfigs(&b.cfg) {
		if _, _, err := b.topics.createIfAbsent(c); err != nil {
			return err
		}
	}
	var entries []offsets.Entry
	err = b.st.RangeConsumerOffsets(func(group, topic string, queueID int32, offset int64) bool {
		entries = append(entries, offsets.Entry{Key: offsets.Key{Group: group, Topic: topic, QueueID: queueID}, Offset: offset})
		return true
	})
	if err != nil {
		return fmt.Errorf("broker: load consumer offsets: %w", err)
	}
	b.offsets.Load(entries)
	return nil
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
	protocol.SetUniqIDHost(host.Addr())
	b.holds.Start()
	if err := b.startSchedule(); err != nil {
		_ = b.srv.Close()
		return err
	}

	b.registerAll(b.ctx)
	b.spawn(b.registerLoop)
	b.spawn(func() { b.every(b.cfg.OffsetPersistInterval, b.persistTick) })
	b.spawn(func() { b.every(clientScanInterval, b.scanTick) })
	b.spawn(func() { b.every(b.cfg.TransactionCheckInterval, b.txCheckTick) })
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

// Store returns the broker's message store (for tests and tools).
func (b *Broker) Store() *store.Store { return b.st }

// Config returns the configuration in force, defaults filled in.
func (b *Broker) Config() Config { return b.cfg }

// Run starts the broker and serves until ctx is done, then closes it.
func (b *Broker) Run(ctx context.Context) error {
	if err := b.Start(); err != nil {
		_ = b.Close()
		return err
	}
	<-ctx.Done()
	return b.Close()
}

// Close shuts the broker down in a fixed order: held pulls are answered
// while their connections are still open; background loops stop; the
// server closes every connection and waits for its handlers; consumer
// offsets are persisted; the broker unregisters from the name servers; the
// store closes last, since everything before may still read or write it.
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

	b.closing.Store(true)
	b.holds.Close() // wakes every held pull; they answer in spawned goroutines
	close(b.stop)
	b.cancel()
	b.bg.Wait()
	b.closeSchedule() // delivers into the store, so before it closes
	var errs []error
	if started {
		if err := b.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("broker: close server: %w", err))
		}
	}
	if clean {
		if err := b.persistOffsets(); err != nil {
			errs = append(errs, err)
		}
		if started {
			b.unregisterAll()
		}
	}
	_ = b.ns.Close()
	if err := b.st.Close(); err != nil {
		errs = append(errs, fmt.Errorf("broker: close store: %w", err))
	}
	b.log.Info("broker: closed")
	return errors.Join(errs...)
}

// spawn runs fn in a goroutine that Close waits for. Once the broker is
// closing it runs fn inline instead, so work that must happen (an answer to
// a held pull) is never dropped.
func (b *Broker) spawn(fn func()) {
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		fn()
		return
	}
	b.bg.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.bg.Done()
		fn()
	}()
}

// every runs fn every d until the broker stops: the shape of the broker's
// periodic work (offset persistence, client scan, transaction checks).
func (b *Broker) every(d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// persistTick writes changed consumer offsets (every OffsetPersistInterval).
func (b *Broker) persistTick() {
	if err := b.persistOffsets(); err != nil {
		b.log.Error("broker: persist consumer offsets", "err", err)
	}
}

// persistOffsets writes every offset changed since the last call.
func (b *Broker) persistOffsets() error {
	_, err := b.offsets.Persist(func(es []offsets.Entry) (int, error) {
		for i, e := range es {
			if err := b.st.CommitOffset(e.Group, e.Topic, e.QueueID, e.Offset); err != nil {
				return i, fmt.Errorf("broker: persist offset %s/%s/%d: %w", e.Group, e.Topic, e.QueueID, err)
			}
		}
		return len(es), nil
	})
	return err
}

// scanTick expires idle clients and sweeps stale locks (every 10 s).
func (b *Broker) scanTick() {
	b.ExpireClients()
	b.locks.Sweep()
}

// ExpireClients drops clients silent for ChannelExpiry and notifies the
// groups that changed. The scan loop calls it every 10 s; tests call it
// after moving their clock.
func (b *Broker) ExpireClients() {
	for _, g := range b.clients.ExpireIdle() {
		b.notifyGroup(g)
	}
}

// onArrival is the store's arrival hook: wake the pulls held on the queue.
func (b *Broker) onArrival(topic string, queueID int32, maxOffset int64) {
	b.holds.Notify(longpoll.Key{Topic: topic, QueueID: queueID}, maxOffset)
	b.scheduleArrived(topic)
}

// onConnClose drops the connection's clients and notifies their groups.
// It runs on a transport goroutine and must not block.
func (b *Broker) onConnClose(c *remoting.Conn) {
	groups := b.clients.ConnClosed(c.ID())
	if len(groups) == 0 {
		return
	}
	b.spawn(func() {
		for _, g := range groups {
			b.notifyGroup(g)
		}
	})
}

// registerHandlers wires every request code the broker serves.
func (b *Broker) registerHandlers() {
	h := b.srv.Handle
	h(protocol.ReqSendMessage, b.handleSend)
	h(protocol.ReqSendMessageV2, b.handleSend)
	h(protocol.ReqSendBatchMessage, b.handleSend)
	h(protocol.ReqPullMessage, b.handlePull)
	h(protocol.ReqLitePullMessage, b.handlePull)
	h(protocol.ReqQueryConsumerOffset, b.handleQueryConsumerOffset)
	h(protocol.ReqUpdateConsumerOffset, b.handleUpdateConsumerOffset)
	h(protocol.ReqGetMaxOffset, b.handleGetMaxOffset)
	h(protocol.ReqGetMinOffset, b.handleGetMinOffset)
	h(protocol.ReqSearchOffsetByTimestamp, b.handleSearchOffset)
	h(protocol.ReqGetEarliestMsgStoreTime, b.handleEarliestMsgStoreTime)
	h(protocol.ReqHeartBeat, b.handleHeartbeat)
	h(protocol.ReqUnregisterClient, b.handleUnregisterClient)
	h(protocol.ReqGetConsumerListByGroup, b.handleGetConsumerList)
	h(protocol.ReqLockBatchMQ, b.handleLockBatch)
	h(protocol.ReqUnlockBatchMQ, b.handleUnlockBatch)
	h(protocol.ReqUpdateAndCreateTopic, b.handleCreateTopic)
	h(protocol.ReqDeleteTopicInBroker, b.handleDeleteTopic)
	h(protocol.ReqGetAllTopicConfig, b.handleGetAllTopicConfig)
	h(protocol.ReqGetTopicStatsInfo, b.handleTopicStats)
	h(protocol.ReqGetConsumeStats, b.handleConsumeStats)
	h(protocol.ReqGetBrokerRuntimeInfo, b.handleRuntimeInfo)
	h(protocol.ReqViewMessageByID, b.handleViewMessage)
	h(protocol.ReqQueryMessage, b.handleQueryMessage)
	h(protocol.ReqConsumerSendMsgBack, b.handleConsumerSendMsgBack)
	h(protocol.ReqEndTransaction, b.handleEndTransaction)
	h(protocol.ReqGetAllSubscriptionGroupConfig, b.handleGetAllSubscriptionGroups)
	h(protocol.ReqGetAllConsumerOffset, b.handleGetAllConsumerOffsets)
	h(protocol.ReqQueryTopicConsumeByWho, b.handleTopicConsumeByWho)
	h(protocol.ReqInvokeBrokerToResetOffset, b.handleResetOffset)
	h(protocol.ReqGetConsumerConnectionList, b.handleConsumerConnections)
	h(protocol.ReqGetProducerConnectionList, b.handleProducerConnections)
	h(protocol.ReqGetTopicConfig, b.handleGetTopicConfig)
	h(protocol.ReqGetBrokerConfig, b.handleGetBrokerConfig)
	h(protocol.ReqGetConsumerRunningInfo, b.handleConsumerRunningInfo)
	h(protocol.ReqConsumeMessageDirectly, b.handleConsumeMessageDirectly)
	h(protocol.ReqInvokeBrokerToGetConsumerStatus, b.handleGetConsumerStatus)
	b.srv.HandleDefault(b.handleUnsupported)
}

// errResponse answers req with code and remark.
func errResponse(req *protocol.Command, code int16, format string, args ...any) *protocol.Command {
	return protocol.NewResponse(req, code, fmt.Sprintf(format, args...))
}

// handleUnsupported answers codes the broker does not serve.
func (b *Broker) handleUnsupported(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.log.Debug("broker: request code not supported", "code", req.Code, "remote", c.RemoteAddr())
	return errResponse(req, protocol.RespRequestCodeNotSupported,
		"request code %d (%s) not supported by this broker", req.Code, protocol.RequestCodeName(req.Code))
}

// ConsumerIDs returns the client ids registered in a consumer group.
func (b *Broker) ConsumerIDs(group string) []string { return b.clients.ConsumerIDs(group) }

// send runs a write to c that the broker starts on its own (the answer to
// a held pull, a notification). It skips closed connections and contains a
// panic from the transport: netpoll can panic when a connection the peer
// just closed is written to before the close is noticed (seen with the
// official client shutting down while its pull was held).
func (b *Broker) send(c *remoting.Conn, write func() error) {
	if c.Err() != nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			b.log.Warn("broker: write to a closing connection panicked", "remote", c.RemoteAddr(), "panic", p)
		}
	}()
	if err := write(); err != nil {
		b.log.Debug("broker: write failed", "remote", c.RemoteAddr(), "err", err)
	}
}

// ConsumerOffset returns a group's committed offset on a queue.
func (b *Broker) ConsumerOffset(group, topic string, queueID int32) (int64, bool) {
	return b.offsets.Get(offsets.Key{Group: group, Topic: topic, QueueID: queueID})
}

// PullRequests returns how many pull requests the broker has received.
func (b *Broker) PullRequests() int64 { return b.pullCount.Load() }

// MessagesPulled returns how many messages pull answers have carried to a
// consumer group since the broker started.
func (b *Broker) MessagesPulled(group string) int64 {
	if n, ok := b.groupGetNums.Load(group); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// countPulled adds n messages answered to group's pulls.
func (b *Broker) countPulled(group string, n int) {
	v, ok := b.groupGetNums.Load(group)
	if !ok {
		v, _ = b.groupGetNums.LoadOrStore(group, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(int64(n))
}
