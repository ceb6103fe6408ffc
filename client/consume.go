package client

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// consumeTask is one batch for a concurrent listener.
type consumeTask struct {
	qs   *queueState
	msgs []pqMsg
}

// dispatch puts pulled messages into the queue's process queue and hands
// them to the consume service.
func (c *PushConsumer) dispatch(qs *queueState, raw []*protocol.MessageExt) {
	msgs := toExt(qs.mq, raw)
	start := qs.pq.Put(msgs)
	if c.orderly() {
		if start {
			c.spawn(func() { c.consumeOrderly(qs) })
		}
		return
	}
	for i := 0; i < len(msgs); i += c.cfg.ConsumeBatchSize {
		c.tasks.push(consumeTask{qs: qs, msgs: msgs[i:min(i+c.cfg.ConsumeBatchSize, len(msgs))]})
	}
}

// taskQueue is the concurrent consume service's queue. It is unbounded so
// that pulling never blocks on busy listeners: its size is bounded by the
// process queues' flow control instead, as in RocketMQ's thread pool.
type taskQueue struct {
	mu     sync.Mutex
	items  []consumeTask
	signal chan struct{} // one slot: items were added
}

func newTaskQueue() *taskQueue { return &taskQueue{signal: make(chan struct{}, 1)} }

func (q *taskQueue) push(t consumeTask) {
	q.mu.Lock()
	q.items = append(q.items, t)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop returns the next task, waiting until there is one or ctx ends.
func (q *taskQueue) pop(ctx context.Context) (consumeTask, bool) {
	for ctx.Err() == nil {
		q.mu.Lock()
		if len(q.items) > 0 {
			t := q.items[0]
			q.items[0] = consumeTask{}
			q.items = q.items[1:]
			more := len(q.items) > 0
			q.mu.Unlock()
			if more { // pass the wake-up on to another worker
				select {
				case q.signal <- struct{}{}:
				default:
				}
			}
			return t, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-ctx.Done():
		}
	}
	return consumeTask{}, false
}

// consumeWorker runs concurrent listener calls until the consumer stops.
func (c *PushConsumer) consumeWorker() {
	for {
		t, ok := c.tasks.pop(c.life)
		if !ok {
			return
		}
		c.consumeConcurrently(t)
	}
}

func exts(msgs []pqMsg) []*MessageExt {
	out := make([]*MessageExt, len(msgs))
	for i, m := range msgs {
		out[i] = m.m
	}
	return out
}

// callConcurrent runs the listener; a panic counts as RetryLater.
func (c *PushConsumer) callConcurrent(ctx context.Context, msgs []*MessageExt) ConsumeResult {
	return callListener(ctx, c, c.cfg.Concurrently, msgs, ConsumeRetryLater)
}

// callOrderly runs the listener; a panic counts as Suspend.
func (c *PushConsumer) callOrderly(ctx context.Context, msgs []*MessageExt) OrderlyResult {
	return callListener(ctx, c, c.cfg.Orderly, msgs, OrderlySuspend)
}

// callListener calls listen, logging a panic and answering onPanic for it.
func callListener[R any](ctx context.Context, c *PushConsumer, listen func(context.Context, []*MessageExt) R, msgs []*MessageExt, onPanic R) (res R) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("client: listener panicked", "panic", p, "stack", string(debug.Stack()))
			res = onPanic
		}
	}()
	return listen(ctx, msgs)
}

// consumeConcurrently is RocketMQ's ConsumeRequest.run plus
// processConsumeResult: consume, send failures back, remove the rest from
// the process queue and commit the smallest offset still in it.
func (c *PushConsumer) consumeConcurrently(t consumeTask) {
	qs := t.qs
	// A task taken from the queue runs even if the consumer is stopping
	// (its listener then sees a cancelled ctx): the workers take tasks in
	// order, so what they took is a prefix of each queue, and Shutdown waits
	// for them before it commits. Skipping one while a later batch of its
	// queue ran would hold the committed offset below that batch, and a
	// clean shutdown would re-deliver it.
	if qs.pq.Dropped() {
		return
	}
	run := c.running.start(&t, c.cfg.Now())
	result := c.callConcurrent(qs.ctx, exts(t.msgs))
	if !c.running.finish(run) {
		return // timed out: already sent back and removed by expireSlow
	}
	if qs.pq.Dropped() {
		// Reassigned meanwhile: the new owner starts from the committed
		// offset, which never passed these messages.
		return
	}
	done := t.msgs
	var failed []pqMsg
	if result != ConsumeSuccess {
		if c.clustering() {
			done = nil
			for _, m := range t.msgs {
				if err := c.sendBack(qs.ctx, m.m, 0); err != nil {
					c.log.Warn("client: send back failed; consuming again locally", "msgId", m.m.MsgID, "err", err)
					m.m.ReconsumeTimes++
					failed = append(failed, m)
				} else {
					done = append(done, m)
				}
			}
		} else {
			for _, m := range t.msgs {
				c.log.Warn("client: broadcasting message failed and is dropped", "msgId", m.m.MsgID, "queue", qs.mq.String())
			}
		}
	}
	_, store, _ := c.state()
	if off := qs.pq.Remove(done); off >= 0 && !qs.pq.Dropped() && store != nil {
		store.Update(qs.mq, off, true)
	}
	if len(failed) > 0 {
		c.spawn(func() {
			if sleep(qs.ctx, c.cfg.RetryLocalDelay) && !qs.pq.Dropped() {
				c.tasks.push(consumeTask{qs: qs, msgs: failed})
			}
		})
	}
}

// consumeOrderly drains one queue in order, one batch at a time; at most
// one goroutine runs it per queue (processqueue's dispatch flag), and the
// consume token keeps rebalance from unlocking mid-batch.
func (c *PushConsumer) consumeOrderly(qs *queueState) {
	ctx := qs.ctx
	for ctx.Err() == nil && !qs.pq.Dropped() {
		if c.clustering() && !qs.pq.LockValid() {
			// Lock lost or stale: try to take it again, then retry.
			if locked, err := c.lock(ctx, []queue.MessageQueue{qs.mq}); err != nil || len(locked) == 0 {
				if !sleep(ctx, c.cfg.SuspendCurrentQueueTime) {
					return
				}
			}
			continue
		}
		if err := qs.pq.AcquireConsume(ctx); err != nil {
			return
		}
		msgs := qs.pq.Take(c.cfg.ConsumeBatchSize)
		if len(msgs) == 0 {
			_ = qs.pq.ReleaseConsume()
			return // Take cleared the dispatch flag; the next Put restarts us
		}
		result := c.callOrderly(ctx, exts(msgs))
		if qs.pq.Dropped() {
			_ = qs.pq.ReleaseConsume()
			return
		}
		if result == OrderlySuspend {
			if c.overMaxReconsume(msgs) {
				// Give up on these: to the dead-letter queue, then go on.
				allSent := true
				for _, m := range msgs {
					if err := c.sendBack(ctx, m.m, -1); err != nil {
						c.log.Warn("client: orderly send to DLQ failed", "msgId", m.m.MsgID, "err", err)
						allSent = false
					}
				}
				if allSent {
					result = OrderlySuccess
				}
			}
		}
		if result == OrderlySuspend {
			for _, m := range msgs {
				m.m.ReconsumeTimes++
			}
			qs.pq.Rollback()
			_ = qs.pq.ReleaseConsume()
			if !sleep(ctx, c.cfg.SuspendCurrentQueueTime) {
				return
			}
			continue
		}
		off := qs.pq.Commit()
		_, store, _ := c.state()
		if off >= 0 && store != nil {
			store.Update(qs.mq, off, false)
		}
		_ = qs.pq.ReleaseConsume()
	}
}

func (c *PushConsumer) overMaxReconsume(msgs []pqMsg) bool {
	if c.cfg.MaxReconsumeTimes < 0 {
		return false
	}
	for _, m := range msgs {
		if int(m.m.ReconsumeTimes) >= c.cfg.MaxReconsumeTimes {
			return true
		}
	}
	return false
}

// sendBack returns a failed message to the broker for redelivery through
// the group's retry topic (CONSUMER_SEND_MSG_BACK); delayLevel 0 lets the
// broker pick 3+reconsumeTimes, -1 sends it to the dead-letter queue. If the
// broker refuses, the message is re-sent as a normal message to the retry
// topic (the official clients' fallback).
func (c *PushConsumer) sendBack(ctx context.Context, m *MessageExt, delayLevel int32) error {
	inst, _, ok := c.state()
	if !ok {
		return ErrClosed
	}
	addr := ""
	if m.Queue.BrokerName != "" {
		addr, _ = inst.brokerAddr(ctx, m.Queue.BrokerName)
	}
	if addr == "" && m.StoreHost.IsValid() {
		addr = m.StoreHost.String()
	}
	maxTimes := int32(c.cfg.MaxReconsumeTimes)
	if maxTimes < 0 {
		maxTimes = 16
	}
	h := protocol.ConsumerSendMsgBackRequestHeader{
		Offset:            m.CommitLogOffset,
		Group:             c.cfg.Group,
		DelayLevel:        delayLevel,
		OriginMsgID:       m.MsgID,
		OriginTopic:       m.Topic,
		MaxReconsumeTimes: maxTimes,
		BrokerName:        m.Queue.BrokerName,
	}
	resp, err := inst.invoke(ctx, addr, protocol.NewRequest(protocol.ReqConsumerSendMsgBack, h.Encode(), nil))
	if err == nil && resp.Code == protocol.RespSuccess {
		return nil
	}
	if err == nil {
		err = brokerError("send back "+m.MsgID, m.Queue.BrokerName, addr, resp)
	} else {
		err = transportError("send back "+m.MsgID, m.Queue.BrokerName, addr, err)
	}
	if ferr := c.sendBackAsNormal(ctx, inst, m, maxTimes); ferr != nil {
		return fmt.Errorf("%w; fallback: %w", err, ferr)
	}
	return nil
}

// sendBackAsNormal sends m to %RETRY%group as a new delayed message.
func (c *PushConsumer) sendBackAsNormal(ctx context.Context, inst *instance, m *MessageExt, maxTimes int32) error {
	retry := queue.RetryGroupTopicPrefix + c.cfg.Group
	route, err := inst.route(ctx, retry)
	if err != nil {
		return err
	}
	if len(route.publish) == 0 {
		return fmt.Errorf("%w: %s has no writable queue", ErrTopicNotExist, retry)
	}
	props := map[string]string{}
	for k, v := range m.Properties {
		props[k] = v
	}
	delete(props, protocol.PropertyTransactionPrepared)
	if props[protocol.PropertyRetryTopic] == "" {
		props[protocol.PropertyRetryTopic] = m.Topic
	}
	if props[protocol.PropertyOriginMessageID] == "" {
		props[protocol.PropertyOriginMessageID] = m.MsgID
	}
	props[protocol.PropertyDelayTimeLevel] = strconv.Itoa(3 + int(m.ReconsumeTimes))
	mq := route.publish[int(m.QueueOffset)%len(route.publish)]
	addr, err := inst.brokerAddr(ctx, mq.BrokerName)
	if err != nil {
		return err
	}
	h := protocol.SendMessageRequestHeader{
		ProducerGroup: "CLIENT_INNER_PRODUCER", Topic: retry, DefaultTopic: protocol.DefaultTopicKey,
		DefaultTopicQueueNums: 4, QueueID: mq.QueueID, SysFlag: m.SysFlag &^ protocol.SysFlagCompressed,
		BornTimestamp: m.BornTimestamp, Flag: m.Flag, Properties: message.MarshalProperties(props),
		ReconsumeTimes: m.ReconsumeTimes + 1, MaxReconsumeTimes: maxTimes, BrokerName: mq.BrokerName,
	}
	resp, err := inst.invoke(ctx, addr, protocol.NewRequest(protocol.ReqSendMessage, h.Encode(), m.Body))
	if err != nil {
		return transportError("send to retry topic", mq.BrokerName, addr, err)
	}
	if resp.Code != protocol.RespSuccess {
		return brokerError("send to retry topic", mq.BrokerName, addr, resp)
	}
	return nil
}
