package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/runnelmq/runnel/client/internal/processqueue"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// doRebalance re-splits every subscribed topic's queues (RocketMQ
// RebalanceImpl.doRebalance): every RebalanceInterval, on
// NOTIFY_CONSUMER_IDS_CHANGED and at Start.
func (c *PushConsumer) doRebalance(ctx context.Context) {
	c.rebalanceMu.Lock()
	defer c.rebalanceMu.Unlock()
	inst, _, ok := c.state()
	if !ok {
		return
	}
	changed := false
	for topic := range c.subscriptions() {
		route, err := inst.route(ctx, topic)
		if err != nil {
			if !queue.IsRetryTopic(topic) && ctx.Err() == nil {
				c.log.Warn("client: rebalance: no route", "topic", topic, "err", err)
			}
			continue
		}
		mine := route.subscribe
		if c.clustering() {
			cids, err := c.consumerIDs(ctx, inst, route)
			if err != nil {
				if ctx.Err() == nil {
					c.log.Warn("client: rebalance: consumer list", "topic", topic, "err", err)
				}
				continue
			}
			if len(route.subscribe) == 0 {
				mine = nil
			} else if mine, err = c.cfg.Strategy.Allocate(c.cfg.Group, inst.clientID, route.subscribe, cids); err != nil {
				c.log.Warn("client: rebalance: allocate", "topic", topic, "strategy", c.cfg.Strategy.Name(), "err", err)
				continue
			}
		}
		if c.updateQueues(ctx, inst, topic, mine) {
			changed = true
		}
	}
	if changed {
		// Brokers learn the new assignment's subscription at once.
		_ = inst.heartbeat(ctx)
	}
}

// consumerIDs asks a broker of the topic for the group's client ids, sorted.
func (c *PushConsumer) consumerIDs(ctx context.Context, inst *instance, route *topicRoute) ([]string, error) {
	brokers := route.data.BrokerDatas
	if len(brokers) == 0 {
		return nil, fmt.Errorf("%w: route has no broker", ErrNoBroker)
	}
	b := brokers[rand.IntN(len(brokers))]
	addr := b.MasterAddr()
	if addr == "" {
		for _, a := range b.BrokerAddrs {
			addr = a
			break
		}
	}
	req := protocol.NewRequest(protocol.ReqGetConsumerListByGroup,
		protocol.GetConsumerListByGroupRequestHeader{ConsumerGroup: c.cfg.Group}.Encode(), nil)
	resp, err := inst.invoke(ctx, addr, req)
	if err != nil {
		return nil, transportError("get consumer list of "+c.cfg.Group, b.BrokerName, addr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return nil, brokerError("get consumer list of "+c.cfg.Group, b.BrokerName, addr, resp)
	}
	var body protocol.GetConsumerListByGroupResponseBody
	if err := body.Decode(resp.Body); err != nil {
		return nil, fmt.Errorf("client: consumer list from %s (%s): %w", b.BrokerName, addr, err)
	}
	if len(body.ConsumerIDList) == 0 {
		return nil, fmt.Errorf("client: consumer list from %s (%s) is empty", b.BrokerName, addr)
	}
	return slices.Sorted(slices.Values(body.ConsumerIDList)), nil
}

// updateQueues makes topic's assigned queues equal mine: drops the queues
// no longer ours (offset persisted first, lock released) and adds the new
// ones at their start offset. It reports whether anything changed.
func (c *PushConsumer) updateQueues(ctx context.Context, inst *instance, topic string, mine []queue.MessageQueue) bool {
	want := map[queue.MessageQueue]bool{}
	for _, mq := range mine {
		want[mq] = true
	}
	var drop []*queueState
	c.mu.Lock()
	for mq, qs := range c.mu.queues {
		if mq.Topic != topic {
			continue
		}
		if !want[mq] {
			drop = append(drop, qs)
		} else if qs.pq.PullExpired() {
			// The pull goroutine stopped making progress; start over.
			drop = append(drop, qs)
		}
	}
	var add []queue.MessageQueue
	for _, mq := range mine {
		if _, ok := c.mu.queues[mq]; !ok {
			add = append(add, mq)
		}
	}
	c.mu.Unlock()
	for _, qs := range drop {
		c.dropQueue(ctx, qs, true)
	}
	added := 0
	for _, mq := range add {
		if err := c.addQueue(ctx, inst, mq); err != nil {
			if ctx.Err() == nil {
				c.log.Info("client: queue not assigned this round", "queue", mq.String(), "err", err)
			}
			continue
		}
		added++
	}
	return len(drop) > 0 || added > 0
}

// addQueue locks (orderly clustering), computes the start offset and starts
// the queue's pull goroutine.
func (c *PushConsumer) addQueue(ctx context.Context, inst *instance, mq queue.MessageQueue) error {
	_, store, ok := c.state()
	if !ok {
		return ErrClosed
	}
	if c.orderly() && c.clustering() {
		locked, err := c.lock(ctx, []queue.MessageQueue{mq})
		if err != nil {
			return err
		}
		if len(locked) == 0 {
			return fmt.Errorf("client: %v is locked by another client", mq)
		}
	}
	start, err := c.startOffset(ctx, inst, store, mq)
	if err != nil {
		return err
	}
	pcfg := processqueue.DefaultConfig()
	pq := processqueue.New[pqMsg](pcfg)
	if c.orderly() {
		pq.MarkLocked() // clustering: just locked above; broadcasting: no locks
	}
	qctx, cancel := context.WithCancel(c.life)
	qs := &queueState{mq: mq, pq: pq, ctx: qctx, cancel: cancel, start: start}
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		cancel()
		return ErrClosed
	}
	c.mu.queues[mq] = qs
	c.mu.Unlock()
	store.Update(mq, start, false)
	c.spawn(func() { c.pullLoop(qs) })
	return nil
}

// startOffset is RocketMQ's computePullFromWhere: the committed offset, or
// the ConsumeFrom policy for a group that has none.
func (c *PushConsumer) startOffset(ctx context.Context, inst *instance, store offset.Store, mq queue.MessageQueue) (int64, error) {
	stored, err := store.Read(ctx, mq, offset.ReadFromStore)
	if err != nil {
		return 0, err
	}
	plan, err := offset.PlanStart(c.cfg.ConsumeFrom, stored, mq)
	if err != nil {
		return 0, err
	}
	switch plan.Kind {
	case offset.StartAtMaxOffset:
		return queueOffset(ctx, inst, protocol.ReqGetMaxOffset, mq, nil)
	case offset.StartAtTimestamp:
		return queueOffset(ctx, inst, protocol.ReqSearchOffsetByTimestamp, mq,
			map[string]string{"timestamp": fmt.Sprint(c.cfg.ConsumeTimestamp.UnixMilli())})
	}
	return plan.Offset, nil
}

// queueOffset sends GET_MAX_OFFSET, GET_MIN_OFFSET or
// SEARCH_OFFSET_BY_TIMESTAMP for mq and returns the offset.
func queueOffset(ctx context.Context, inst *instance, code int16, mq queue.MessageQueue, extra map[string]string) (int64, error) {
	addr, err := inst.brokerAddr(ctx, mq.BrokerName)
	if err != nil {
		return 0, err
	}
	ext := protocol.QueueRequestHeader{Topic: mq.Topic, QueueID: mq.QueueID, BrokerName: mq.BrokerName}.Encode()
	for k, v := range extra {
		ext[k] = v
	}
	op := protocol.RequestCodeName(code) + " of " + mq.String()
	resp, err := inst.invoke(ctx, addr, protocol.NewRequest(code, ext, nil))
	if err != nil {
		return 0, transportError(op, mq.BrokerName, addr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return 0, brokerError(op, mq.BrokerName, addr, resp)
	}
	var h protocol.GetMaxOffsetResponseHeader
	if err := h.Decode(resp.ExtFields); err != nil {
		return 0, fmt.Errorf("client: %s from %s (%s): %w", op, mq.BrokerName, addr, err)
	}
	return h.Offset, nil
}

// dropQueue stops a queue: pulls end, nothing more is committed for it; the
// offset is persisted (unless persist is false) and, for orderly
// clustering, the broker lock released once no batch is in flight.
func (c *PushConsumer) dropQueue(ctx context.Context, qs *queueState, persist bool) {
	qs.pq.Drop()
	qs.cancel()
	c.mu.Lock()
	delete(c.mu.queues, qs.mq)
	store := c.mu.store
	c.mu.Unlock()
	unlock := false
	if c.orderly() && c.clustering() {
		// Wait (briefly) for the batch in flight so the next owner does not
		// start while we still consume; otherwise let the lock expire.
		actx, cancel := context.WithTimeout(ctx, time.Second)
		unlock = qs.pq.AcquireConsume(actx) == nil
		cancel()
	}
	if persist {
		if err := store.persistSync(ctx, []queue.MessageQueue{qs.mq}); err != nil && ctx.Err() == nil {
			c.log.Warn("client: persist offset of dropped queue failed", "queue", qs.mq.String(), "err", err)
		}
	}
	store.Remove(qs.mq)
	if unlock {
		c.unlock(ctx, []queue.MessageQueue{qs.mq})
		_ = qs.pq.ReleaseConsume()
	}
}

// resetOffsets is RESET_CONSUMER_CLIENT_OFFSET: the queues of topic are
// dropped without persisting, the new offsets written to the store, and a
// rebalance re-adds the queues from there.
func (c *PushConsumer) resetOffsets(ctx context.Context, topic string, table map[queue.MessageQueue]int64) {
	c.rebalanceMu.Lock()
	inst, store, ok := c.state()
	if !ok {
		c.rebalanceMu.Unlock()
		return
	}
	var mqs []queue.MessageQueue
	for mq, off := range table {
		if mq.Topic != topic {
			continue
		}
		c.mu.Lock()
		qs := c.mu.queues[mq]
		c.mu.Unlock()
		if qs != nil {
			c.dropQueue(ctx, qs, false)
		}
		store.Update(mq, off, false)
		mqs = append(mqs, mq)
	}
	if err := store.persistSync(ctx, mqs); err != nil {
		c.log.Warn("client: reset offsets: persist failed", "topic", topic, "err", err)
	}
	for _, mq := range mqs {
		store.Remove(mq)
	}
	c.rebalanceMu.Unlock()
	c.log.Info("client: offsets reset by broker", "topic", topic, "queues", len(mqs))
	inst.triggerRebalance()
}
