package client

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/internal/processqueue"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// pqMsg adapts a delivered message to the process queue.
type pqMsg struct{ m *MessageExt }

func (p pqMsg) QueueOffset() int64 { return p.m.MessageExt.QueueOffset }
func (p pqMsg) BodySize() int      { return len(p.m.Body) }

// queueState is one assigned queue: its process queue and the life of its
// pull goroutine.
type queueState struct {
	mq     queue.MessageQueue
	pq     *processqueue.ProcessQueue[pqMsg]
	ctx    context.Context // cancelled when the queue is dropped or the consumer stops
	cancel context.CancelFunc
	start  int64 // first offset to pull
}

// storeWithSync is an offset store that can also persist synchronously.
type storeWithSync interface {
	offset.Store
	persistSync(ctx context.Context, mqs []queue.MessageQueue) error
}

// localStore adapts offset.LocalFile (already synchronous).
type localStore struct{ *offset.LocalFile }

func (s localStore) persistSync(ctx context.Context, mqs []queue.MessageQueue) error {
	return s.Persist(ctx, mqs)
}

// PushConsumer pulls for its assigned queues and hands messages to its
// listener; see the package doc.
type PushConsumer struct {
	cfg     PushConsumerConfig
	log     *slog.Logger
	flowLog processqueue.Sampler

	subMu sync.Mutex
	subs  map[string]protocol.SubscriptionData // topic -> subscription (incl. the retry topic)

	// rebalanceMu serialises rebalances and resets; it also guards
	// closed against a rebalance that races Shutdown.
	rebalanceMu sync.Mutex

	mu struct {
		sync.Mutex
		started bool
		closed  bool
		inst    *instance
		store   storeWithSync
		queues  map[queue.MessageQueue]*queueState
	}

	life     context.Context
	stopLife context.CancelFunc
	tasks    *taskQueue // concurrent listener work
	running  runningTasks
	wg       sync.WaitGroup
}

// NewPushConsumer validates cfg.
func NewPushConsumer(cfg PushConsumerConfig) (*PushConsumer, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	if err := cfg.Client.ensureDefaults(); err != nil {
		return nil, err
	}
	c := &PushConsumer{cfg: cfg, log: cfg.Client.Logger.With("group", cfg.Group), subs: map[string]protocol.SubscriptionData{}}
	c.mu.queues = map[queue.MessageQueue]*queueState{}
	if cfg.Model == Clustering {
		retry := queue.RetryGroupTopicPrefix + cfg.Group
		c.subs[retry] = c.subscription(retry, protocol.SubAll)
	}
	return c, nil
}

func (c *PushConsumer) subscription(topic, expr string) protocol.SubscriptionData {
	s, _ := TagSelector(expr).subscription(topic) // a tag selector never fails
	return s
}

// Subscribe adds topic with a tag expression ("*", "", "TagA",
// "TagA || TagB"). Call it before Start.
func (c *PushConsumer) Subscribe(topic, expr string) error {
	return c.SubscribeSelector(topic, TagSelector(expr))
}

// SubscribeSelector adds topic with a tag or SQL92 selector, e.g.
// SQL92Selector("a > 5 AND b = 'x'"). Call it before Start. Subscribing
// to a topic again replaces its selector.
func (c *PushConsumer) SubscribeSelector(topic string, sel MessageSelector) error {
	if err := validateTopic(topic); err != nil {
		return err
	}
	sub, err := sel.subscription(topic)
	if err != nil {
		return err
	}
	c.mu.Lock()
	started := c.mu.started
	c.mu.Unlock()
	if started {
		return fmt.Errorf("%w: Subscribe after Start", ErrBadConfig)
	}
	c.subMu.Lock()
	defer c.subMu.Unlock()
	c.subs[topic] = sub
	return nil
}

func (c *PushConsumer) subscriptions() map[string]protocol.SubscriptionData {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	return maps.Clone(c.subs)
}

func (c *PushConsumer) orderly() bool    { return c.cfg.Orderly != nil }
func (c *PushConsumer) clustering() bool { return c.cfg.Model == Clustering }

// Start joins the client instance, checks that every subscribed topic has
// a route, sends heartbeats and runs the first rebalance.
func (c *PushConsumer) Start(ctx context.Context) error {
	c.mu.Lock()
	switch {
	case c.mu.closed:
		c.mu.Unlock()
		return ErrClosed
	case c.mu.started:
		c.mu.Unlock()
		return nil
	}
	subs := c.subscriptions()
	if len(subs) == 0 || (c.clustering() && len(subs) == 1) {
		c.mu.Unlock()
		return fmt.Errorf("%w: no topic subscribed", ErrBadConfig)
	}
	inst, err := acquireInstance(c.cfg.Client)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	var store storeWithSync
	if c.clustering() {
		store = &remoteStore{inst: inst, group: c.cfg.Group}
	} else {
		path, err := offset.LocalFilePath(c.cfg.LocalOffsetDir, inst.clientID, c.cfg.Group)
		if err == nil {
			var lf *offset.LocalFile
			lf, err = offset.OpenLocalFile(path)
			store = localStore{lf}
		}
		if err != nil {
			c.mu.Unlock()
			inst.release()
			return err
		}
	}
	for topic := range subs {
		if _, err := inst.updateRoute(ctx, topic); err != nil {
			if queue.IsRetryTopic(topic) {
				continue // created by the broker on our first heartbeat
			}
			c.mu.Unlock()
			inst.release()
			return fmt.Errorf("client: consumer %s: route of subscribed topic %s: %w", c.cfg.Group, topic, err)
		}
	}
	if err := inst.registerConsumer(c); err != nil {
		c.mu.Unlock()
		inst.release()
		return err
	}
	c.mu.inst, c.mu.store, c.mu.started = inst, store, true
	c.life, c.stopLife = context.WithCancel(context.Background())
	if !c.orderly() {
		c.tasks = newTaskQueue()
		for range c.cfg.ConsumeGoroutines {
			c.spawn(c.consumeWorker)
		}
		if c.clustering() && c.cfg.ConsumeTimeout > 0 {
			c.spawn(c.expireLoop)
		}
	}
	c.mu.Unlock()

	if err := inst.heartbeat(ctx); err != nil {
		c.log.Warn("client: first heartbeat failed", "err", err)
	}
	c.doRebalance(ctx)
	return nil
}

func (c *PushConsumer) spawn(fn func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

func (c *PushConsumer) state() (*instance, storeWithSync, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.inst, c.mu.store, c.mu.started && !c.mu.closed
}

// Shutdown stops pulling and consuming, waits for listener calls in flight
// (or ctx), persists every offset synchronously, unlocks orderly queues,
// unregisters from the brokers and leaves the client instance. A clean
// Shutdown re-delivers nothing that was consumed.
func (c *PushConsumer) Shutdown(ctx context.Context) error {
	c.rebalanceMu.Lock()
	c.mu.Lock()
	if !c.mu.started || c.mu.closed {
		c.mu.closed = true
		c.mu.Unlock()
		c.rebalanceMu.Unlock()
		return nil
	}
	c.mu.closed = true
	inst, store := c.mu.inst, c.mu.store
	qs := slices.Collect(maps.Values(c.mu.queues))
	c.mu.Unlock()
	c.rebalanceMu.Unlock()

	// 1. No new work: the instance stops calling us, pulls and workers end.
	inst.unregisterConsumer(c.cfg.Group)
	c.stopLife()
	var err error
	// Listeners see a cancelled ctx.
	if werr := waitAll(ctx, &c.wg); werr != nil {
		err = fmt.Errorf("client: consumer %s shutdown: listeners still running: %w", c.cfg.Group, werr)
	}
	// 2. Offsets of everything consumed, then 3. the locks, in that order:
	// the next owner must find the offset when it gets the lock.
	mqs := make([]queue.MessageQueue, 0, len(qs))
	for _, q := range qs {
		mqs = append(mqs, q.mq)
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if perr := store.persistSync(pctx, mqs); perr != nil && err == nil {
		err = fmt.Errorf("client: consumer %s shutdown: %w", c.cfg.Group, perr)
	}
	if c.orderly() && c.clustering() {
		c.unlock(pctx, mqs)
	}
	c.unregisterClient(pctx, inst)
	inst.release()
	return err
}

// unregisterClient tells every broker that this consumer left
// (UNREGISTER_CLIENT, as Java clients do), so the group rebalances at once
// even when the instance's connections stay open for other users.
func (c *PushConsumer) unregisterClient(ctx context.Context, inst *instance) {
	ext := protocol.UnregisterClientRequestHeader{ClientID: inst.clientID, ConsumerGroup: c.cfg.Group}.Encode()
	for _, b := range inst.routes.allBrokers() {
		for _, addr := range b.BrokerAddrs {
			_, _ = inst.invoke(ctx, addr, protocol.NewRequest(protocol.ReqUnregisterClient, ext, nil))
		}
	}
}

// --- consumerImpl ---

func (c *PushConsumer) groupName() string { return c.cfg.Group }

func (c *PushConsumer) subscribedTopics() []string {
	return slices.Collect(maps.Keys(c.subscriptions()))
}

func (c *PushConsumer) consumerData() protocol.ConsumerData {
	subs := c.subscriptions()
	d := protocol.ConsumerData{
		GroupName:        c.cfg.Group,
		ConsumeType:      protocol.ConsumePassively,
		MessageModel:     c.cfg.Model.String(),
		ConsumeFromWhere: c.cfg.consumeFromString(),
	}
	for _, t := range slices.Sorted(maps.Keys(subs)) {
		d.SubscriptionDataSet = append(d.SubscriptionDataSet, subs[t])
	}
	return d
}

// persistAll is the periodic persist. It runs under rebalanceMu so that it
// never reads a queue's offset before a rebalance or reset changes it and
// sends it after: a stale offset landing after a dropped queue's final
// commit would re-deliver, and after a reset would undo it.
func (c *PushConsumer) persistAll(ctx context.Context) {
	c.rebalanceMu.Lock()
	defer c.rebalanceMu.Unlock()
	_, store, ok := c.state()
	if !ok {
		return
	}
	c.mu.Lock()
	mqs := slices.Collect(maps.Keys(c.mu.queues))
	c.mu.Unlock()
	if err := store.Persist(ctx, mqs); err != nil && ctx.Err() == nil {
		c.log.Warn("client: persist offsets failed", "err", err)
	}
}

// queueStates returns the assigned queues.
func (c *PushConsumer) queueStates() []*queueState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Values(c.mu.queues))
}

// Assigned returns the queues currently assigned to this consumer, in
// canonical order.
func (c *PushConsumer) Assigned() []queue.MessageQueue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return queue.Sorted(slices.Collect(maps.Keys(c.mu.queues)))
}

// QueueStats returns a snapshot of each assigned queue's process queue.
func (c *PushConsumer) QueueStats() map[queue.MessageQueue]processqueue.Stats {
	out := map[queue.MessageQueue]processqueue.Stats{}
	for _, qs := range c.queueStates() {
		out[qs.mq] = qs.pq.Stats()
	}
	return out
}
