package client

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/gogroup"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// consumerImpl is what the instance needs from a consumer it serves.
type consumerImpl interface {
	groupName() string
	consumerData() protocol.ConsumerData
	subscribedTopics() []string
	doRebalance(ctx context.Context)
	persistAll(ctx context.Context)
	renewLocks(ctx context.Context)
	runningInfo() []byte
	resetOffsets(ctx context.Context, topic string, table map[queue.MessageQueue]int64)
	consumeDirectly(ctx context.Context, m *protocol.MessageExt, brokerName string) []byte
	consumerStatus(topic string) []byte
}

// instance is the per-client-id shared state; see the package doc.
type instance struct {
	cfg      ClientConfig
	clientID string
	log      *slog.Logger
	rc       *remoting.Client
	routes   routeTable
	fast     *refresher // route refreshes after a failure, between the periodic ones
	// publish holds the topics producers have sent to (for route
	// refresh); a sync.Map because every send notes its topic and all but
	// the first find it there, without the instance lock.
	publish sync.Map

	mu struct {
		sync.Mutex
		refs      int
		producers map[string]int // group -> number of producers using it
		consumers map[string]consumerImpl
		// txProducers answer the broker's transaction checks of their group.
		txProducers map[string]*TransactionProducer
	}

	// life is cancelled when the instance stops; every loop and call the
	// instance makes on its own runs under it.
	life        context.Context
	stopLife    context.CancelFunc
	rebalanceCh chan struct{} // one slot: a rebalance is wanted now
	heartbeatCh chan struct{} // one slot: a heartbeat is wanted now (a new broker appeared)
	// goroutines are the instance's loops and handlers; release stops
	// and waits for them.
	goroutines gogroup.Group
}

// instances is the process-wide registry of instances by client id.
var instances = struct {
	sync.Mutex
	m map[string]*instance
}{m: map[string]*instance{}}

// acquireInstance returns the running instance for cfg's client id,
// starting one if needed; every acquire needs a release.
func acquireInstance(cfg ClientConfig) (*instance, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	id := cfg.ClientID()
	instances.Lock()
	defer instances.Unlock()
	if inst := instances.m[id]; inst != nil {
		inst.mu.Lock()
		inst.mu.refs++
		inst.mu.Unlock()
		return inst, nil
	}
	rcfg, err := cfg.remotingConfig()
	if err != nil {
		return nil, err
	}
	inst := &instance{
		cfg:         cfg,
		clientID:    id,
		log:         cfg.Logger.With("client", id),
		rebalanceCh: make(chan struct{}, 1),
		heartbeatCh: make(chan struct{}, 1),
	}
	inst.life, inst.stopLife = context.WithCancel(context.Background())
	inst.routes.init()
	inst.fast = newRefresher(inst.life, time.Now, inst.spawn, inst.fetchRoute)
	inst.mu.refs = 1
	inst.mu.producers = map[string]int{}
	inst.mu.consumers = map[string]consumerImpl{}
	inst.mu.txProducers = map[string]*TransactionProducer{}
	inst.rc = remoting.NewClient(rcfg)
	inst.registerHandlers()
	inst.startLoops()
	instances.m[id] = inst
	return inst, nil
}

// release drops one reference; the last one stops the instance: its loops
// end first, then the connections close.
func (in *instance) release() {
	instances.Lock()
	in.mu.Lock()
	in.mu.refs--
	last := in.mu.refs == 0
	in.mu.Unlock()
	if last {
		delete(instances.m, in.clientID)
	}
	instances.Unlock()
	if !last {
		return
	}
	in.goroutines.Stop()
	in.stopLife()
	in.goroutines.Wait()
	_ = in.rc.Close()
}

// spawn runs fn in a goroutine the instance waits for; once the instance
// is stopping it runs nothing (handlers of late broker requests call it)
// and reports false.
func (in *instance) spawn(fn func()) bool { return in.goroutines.Go(fn) }

// every runs fn now (after first) and then every d until the instance
// stops.
func (in *instance) every(first, d time.Duration, trigger <-chan struct{}, fn func(ctx context.Context)) {
	in.spawn(func() {
		ctx := in.life
		t := time.NewTimer(first)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				t.Reset(d)
			case <-trigger:
			}
			fn(ctx)
		}
	})
}

func (in *instance) startLoops() {
	c := in.cfg
	in.every(c.RouteRefreshInterval, c.RouteRefreshInterval, nil, in.refreshRoutes)
	in.every(c.HeartbeatInterval, c.HeartbeatInterval, in.heartbeatCh, func(ctx context.Context) { _ = in.heartbeat(ctx) })
	in.every(c.PersistInterval, c.PersistInterval, nil, func(ctx context.Context) {
		for _, cs := range in.consumers() {
			cs.persistAll(ctx)
		}
	})
	in.every(c.RebalanceInterval, c.RebalanceInterval, in.rebalanceCh, func(ctx context.Context) {
		for _, cs := range in.consumers() {
			cs.doRebalance(ctx)
		}
	})
	in.every(c.LockRenewInterval, c.LockRenewInterval, nil, func(ctx context.Context) {
		for _, cs := range in.consumers() {
			cs.renewLocks(ctx)
		}
	})
}

// triggerHeartbeat asks the heartbeat loop to run now.
func (in *instance) triggerHeartbeat() {
	select {
	case in.heartbeatCh <- struct{}{}:
	default:
	}
}

// triggerRebalance asks the rebalance loop to run now; requests coalesce.
func (in *instance) triggerRebalance() {
	select {
	case in.rebalanceCh <- struct{}{}:
	default:
	}
}

func (in *instance) consumers() []consumerImpl {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]consumerImpl, 0, len(in.mu.consumers))
	for _, c := range in.mu.consumers {
		out = append(out, c)
	}
	return out
}

func (in *instance) consumer(group string) consumerImpl {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.mu.consumers[group]
}

func (in *instance) registerConsumer(c consumerImpl) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, dup := in.mu.consumers[c.groupName()]; dup {
		return fmt.Errorf("%w: consumer group %q is already running in client %s; give the consumer its own InstanceName",
			ErrBadConfig, c.groupName(), in.clientID)
	}
	in.mu.consumers[c.groupName()] = c
	return nil
}

func (in *instance) unregisterConsumer(group string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.mu.consumers, group)
}

func (in *instance) registerProducer(group string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.mu.producers[group]++
}

func (in *instance) unregisterProducer(group string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.mu.producers[group]--; in.mu.producers[group] <= 0 {
		delete(in.mu.producers, group)
	}
}

func (in *instance) notePublish(topic string) {
	if _, ok := in.publish.Load(topic); !ok {
		in.publish.Store(topic, struct{}{})
	}
}

// invoke sends a request, applying the call timeout when ctx has none.
func (in *instance) invoke(ctx context.Context, addr string, cmd *protocol.Command) (*protocol.Command, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.cfg.CallTimeout)
		defer cancel()
	}
	return in.rc.Invoke(ctx, addr, cmd)
}

// refreshRoutes re-reads the route of every topic a producer sent to or a
// consumer subscribes to.
func (in *instance) refreshRoutes(ctx context.Context) {
	topics := map[string]bool{}
	in.publish.Range(func(t, _ any) bool {
		topics[t.(string)] = true
		return true
	})
	in.mu.Lock()
	cs := make([]consumerImpl, 0, len(in.mu.consumers))
	for _, c := range in.mu.consumers {
		cs = append(cs, c)
	}
	in.mu.Unlock()
	for _, c := range cs {
		for _, t := range c.subscribedTopics() {
			topics[t] = true
		}
	}
	for t := range topics {
		if _, err := in.updateRoute(ctx, t); err != nil && ctx.Err() == nil {
			in.log.Debug("client: route refresh failed", "topic", t, "err", err)
		}
	}
	in.routes.pruneBrokers()
}

// heartbeat sends the client's producer and consumer groups to every known
// broker (masters only when there is no consumer).
func (in *instance) heartbeat(ctx context.Context) error {
	in.mu.Lock()
	hb := protocol.HeartbeatData{ClientID: in.clientID}
	for g := range in.mu.producers {
		hb.ProducerDataSet = append(hb.ProducerDataSet, protocol.ProducerData{GroupName: g})
	}
	for _, c := range in.mu.consumers {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, c.consumerData())
	}
	in.mu.Unlock()
	if len(hb.ProducerDataSet) == 0 && len(hb.ConsumerDataSet) == 0 {
		return nil
	}
	body, err := hb.Encode()
	if err != nil {
		return fmt.Errorf("client: encode heartbeat: %w", err)
	}
	var firstErr error
	for _, b := range in.routes.allBrokers() {
		for id, addr := range b.BrokerAddrs {
			if id != protocol.MasterID && len(hb.ConsumerDataSet) == 0 {
				continue
			}
			resp, err := in.invoke(ctx, addr, protocol.NewRequest(protocol.ReqHeartBeat, nil, body))
			switch {
			case err != nil:
				err = transportError("heartbeat", b.BrokerName, addr, err)
			case resp.Code != protocol.RespSuccess:
				err = brokerError("heartbeat", b.BrokerName, addr, resp)
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				if ctx.Err() == nil {
					in.log.Warn("client: heartbeat failed", "err", err)
				}
			}
		}
	}
	return firstErr
}
