package client

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func byBroker(mqs []queue.MessageQueue) map[string][]queue.MessageQueue {
	out := map[string][]queue.MessageQueue{}
	for _, mq := range mqs {
		out[mq.BrokerName] = append(out[mq.BrokerName], mq)
	}
	return out
}

// lock asks each queue's broker for the group's lock (LOCK_BATCH_MQ) and
// returns the queues granted; process queues of granted queues are marked
// locked, those refused unlocked.
func (c *PushConsumer) lock(ctx context.Context, mqs []queue.MessageQueue) ([]queue.MessageQueue, error) {
	inst, _, ok := c.state()
	if !ok {
		return nil, ErrClosed
	}
	var granted []queue.MessageQueue
	var firstErr error
	for broker, list := range byBroker(mqs) {
		addr, err := inst.brokerAddr(ctx, broker)
		if err != nil {
			firstErr = err
			continue
		}
		body := protocol.LockBatchRequestBody{ConsumerGroup: c.cfg.Group, ClientID: inst.clientID}
		for _, mq := range list {
			body.MQSet = append(body.MQSet, mq)
		}
		resp, err := inst.invoke(ctx, addr, protocol.NewRequest(protocol.ReqLockBatchMQ, nil, body.Encode()))
		if err != nil {
			firstErr = transportError("lock queues", broker, addr, err)
			continue
		}
		if resp.Code != protocol.RespSuccess {
			firstErr = brokerError("lock queues", broker, addr, resp)
			continue
		}
		rb, err := protocol.DecodeLockBatchResponseBody(resp.Body)
		if err != nil {
			firstErr = fmt.Errorf("client: lock queues on %s (%s): %w", broker, addr, err)
			continue
		}
		ok := map[queue.MessageQueue]bool{}
		for _, mq := range rb.LockOKMQSet {
			ok[mq] = true
			granted = append(granted, mq)
		}
		c.mu.Lock()
		for _, mq := range list {
			if qs := c.mu.queues[mq]; qs != nil {
				if ok[mq] {
					qs.pq.MarkLocked()
				} else {
					qs.pq.MarkUnlocked()
				}
			}
		}
		c.mu.Unlock()
	}
	return granted, firstErr
}

// unlock releases the group's locks on mqs (UNLOCK_BATCH_MQ), sync.
func (c *PushConsumer) unlock(ctx context.Context, mqs []queue.MessageQueue) {
	c.mu.Lock()
	inst := c.mu.inst
	c.mu.Unlock()
	for broker, list := range byBroker(mqs) {
		addr, err := inst.brokerAddr(ctx, broker)
		if err != nil {
			continue
		}
		body := protocol.LockBatchRequestBody{ConsumerGroup: c.cfg.Group, ClientID: inst.clientID}
		for _, mq := range list {
			body.MQSet = append(body.MQSet, mq)
		}
		resp, err := inst.invoke(ctx, addr, protocol.NewRequest(protocol.ReqUnlockBatchMQ, nil, body.Encode()))
		if err != nil || resp.Code != protocol.RespSuccess {
			c.log.Warn("client: unlock failed", "broker", broker, "err", err)
		}
	}
}

// renewLocks re-locks every held queue (orderly clustering only).
func (c *PushConsumer) renewLocks(ctx context.Context) {
	if !c.orderly() || !c.clustering() {
		return
	}
	if _, _, ok := c.state(); !ok {
		return
	}
	c.mu.Lock()
	mqs := slices.Collect(maps.Keys(c.mu.queues))
	c.mu.Unlock()
	if len(mqs) == 0 {
		return
	}
	if _, err := c.lock(ctx, mqs); err != nil && ctx.Err() == nil {
		c.log.Warn("client: lock renewal failed", "err", err)
	}
}
