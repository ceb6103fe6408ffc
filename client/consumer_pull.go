package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runnelmq/runnel/client/internal/processqueue"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// pullResult is a decoded PULL_MESSAGE answer.
type pullResult struct {
	code       int16
	next       int64
	minOffset  int64
	maxOffset  int64
	msgs       []*protocol.MessageExt
	remark     string
	brokerAddr string
}

// pullRPC sends one PULL_MESSAGE for mq at off. suspend holds the pull at
// the broker up to suspendMax when nothing is there; commit > 0 piggy-backs
// the committed offset.
func pullRPC(ctx context.Context, inst *instance, group string, mq queue.MessageQueue, off int64, maxMsgs int,
	sub *protocol.SubscriptionData, postSub bool, suspendMax time.Duration, commit int64) (*pullResult, error) {
	addr := inst.routes.masterAddr(mq.BrokerName)
	if addr == "" {
		// No master known: the old one left and the new one has not
		// registered yet. Read the topic's route again at the pace of the
		// fast refresh, not every known route at every pull.
		_, _ = inst.fast.refresh(ctx, mq.Topic)
		if addr = inst.routes.masterAddr(mq.BrokerName); addr == "" {
			return nil, fmt.Errorf("%w: %s", ErrNoBroker, mq.BrokerName)
		}
	}
	h := protocol.PullMessageRequestHeader{
		ConsumerGroup:        group,
		Topic:                mq.Topic,
		QueueID:              mq.QueueID,
		QueueOffset:          off,
		MaxMsgNums:           int32(maxMsgs),
		CommitOffset:         max(commit, 0),
		SuspendTimeoutMillis: suspendMax.Milliseconds(),
		ExpressionType:       protocol.ExpressionTypeTag,
		BrokerName:           mq.BrokerName,
	}
	if sub != nil && !sub.IsTagType() {
		// A broker checks an SQL92 pull's version against the filter the
		// heartbeat registered (FILTER_DATA_NOT_LATEST when it is older).
		h.ExpressionType, h.SubVersion = sub.ExpressionType, sub.SubVersion
	}
	if postSub && sub != nil {
		h.Subscription = sub.SubString
	}
	h.SysFlag = protocol.BuildPullSysFlag(commit > 0, suspendMax > 0, postSub && sub != nil, false)
	req := protocol.NewRequest(protocol.ReqPullMessage, nil, nil)
	req.MoreExt = h.Append(nil)
	// The broker answers a held pull at suspendMax; allow for the trip. The
	// answer's header is read raw, into the typed header: no map.
	resp, err := inst.rc.InvokeWith(ctx, addr, req, remoting.CallOptions{Timeout: suspendMax + 10*time.Second, RawAnswer: true, Give: true})
	if err != nil {
		return nil, pullFailed(ctx, inst, mq, addr, transportError("pull "+mq.String(), mq.BrokerName, addr, err))
	}
	res := &pullResult{code: resp.Code, remark: resp.Remark, brokerAddr: addr}
	switch resp.Code {
	case protocol.RespSuccess, protocol.RespPullNotFound, protocol.RespPullRetryImmediately, protocol.RespPullOffsetMoved:
	case protocol.RespSubscriptionNotExist, protocol.RespSubscriptionNotLatest:
		// The broker does not know this group's subscription (it restarted,
		// or expired the client): heartbeat now rather than at the next
		// round, up to HeartbeatInterval away.
		inst.triggerHeartbeat()
		return nil, brokerError("pull "+mq.String(), mq.BrokerName, addr, resp)
	default:
		return nil, pullFailed(ctx, inst, mq, addr, brokerError("pull "+mq.String(), mq.BrokerName, addr, resp))
	}
	var rh protocol.PullMessageResponseHeader
	if err := rh.DecodeCommand(resp); err != nil {
		return nil, fmt.Errorf("client: pull %v from %s (%s): %w", mq, mq.BrokerName, addr, err)
	}
	res.next, res.minOffset, res.maxOffset = rh.NextBeginOffset, rh.MinOffset, rh.MaxOffset
	if resp.Code == protocol.RespSuccess {
		msgs, err := message.DecodeMessages(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("client: pull %v from %s (%s): %w", mq, mq.BrokerName, addr, err)
		}
		// Brokers filter by tag hash; collisions are removed here by string.
		// An SQL92 subscription's messages pass as the broker sent them:
		// only the broker evaluates the condition.
		for _, m := range msgs {
			if m.QueueOffset < off {
				continue // never deliver what was not asked for
			}
			if sub == nil || !sub.IsTagType() || sub.MatchesTag(m.Tags()) {
				res.msgs = append(res.msgs, m)
			}
		}
	}
	return res, nil
}

// pullFailed returns err, the failure of a pull of mq at addr, marked with
// errMasterMoved when the route refresh it causes finds the broker's master
// at another address.
func pullFailed(ctx context.Context, inst *instance, mq queue.MessageQueue, addr string, err error) error {
	if inst.recoverRoute(ctx, mq.Topic, mq.BrokerName, addr, err, false) {
		return fmt.Errorf("%w (%w)", err, errMasterMoved)
	}
	return err
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// pullLoop is the queue's pull service: one pull in flight at a time,
// flow-controlled by the process queue (RocketMQ
// DefaultMQPushConsumerImpl.pullMessage).
func (c *PushConsumer) pullLoop(qs *queueState) {
	ctx := qs.ctx
	inst, store, ok := c.state()
	if !ok {
		return
	}
	sub, hasSub := c.subscriptions()[qs.mq.Topic]
	if !hasSub {
		return
	}
	next := qs.start
	wasLocked := true
	for ctx.Err() == nil && !qs.pq.Dropped() {
		d := processqueue.Decide(qs.pq.Stats(), c.cfg.Flow, c.orderly() && c.clustering(), c.heldQueues())
		if !d.Pull {
			if d.Reason == processqueue.ReasonDropped {
				return
			}
			if d.Reason == processqueue.ReasonNotLocked {
				wasLocked = false
			} else if c.flowLog.Allow() {
				// Info, not Warn: pausing a queue whose consumer is behind
				// is flow control doing its job, and a fast consume does it
				// all the time.
				s := qs.pq.Stats()
				c.log.Info("client: flow control: pull paused", "queue", qs.mq.String(), "reason", d.Reason.String(),
					"count", s.Count, "sizeMiB", s.SizeBytes/processqueue.MiB, "span", s.Span, "times", c.flowLog.Count())
			}
			sleep(ctx, d.Delay)
			continue
		}
		if c.orderly() && c.clustering() && !wasLocked {
			// Locked again after losing the lock: another client may have
			// moved the offset meanwhile.
			off, err := store.Read(ctx, qs.mq, offset.ReadFromStore)
			if err != nil {
				sleep(ctx, c.cfg.PullErrorDelay)
				continue
			}
			if off >= 0 {
				next = off
			}
			wasLocked = true
		}
		qs.pq.MarkPulled()
		var commit int64
		if c.clustering() {
			commit, _ = store.Read(ctx, qs.mq, offset.ReadFromMemory)
		}
		res, err := pullRPC(ctx, inst, c.cfg.Group, qs.mq, next, c.cfg.PullBatchSize, &sub,
			c.cfg.PostSubscriptionWhenPull, c.cfg.BrokerSuspendMax, commit)
		if err != nil {
			delay := c.cfg.PullErrorDelay
			var be *BrokerError
			if errors.As(err, &be) && (be.Code == protocol.RespSubscriptionNotExist || be.Code == protocol.RespSubscriptionNotLatest) {
				// A heartbeat is on its way (pullRPC asked for it): retry
				// soon, at a bounded rate, instead of after a full error delay.
				delay = min(delay, heartbeatRetryDelay)
				c.log.Info("client: broker asked for a heartbeat first; sent, pulling again", "queue", qs.mq.String())
			} else if errors.Is(err, errMasterMoved) {
				delay = 0 // pullRPC found the new master: pull there now
			} else if masterMayHaveMoved(err) {
				// Not moved yet as far as the name servers know: try again
				// when the next route refresh may run, so the new master is
				// found as soon as it registers.
				delay = min(delay, max(inst.fast.wait(qs.mq.Topic), refreshMinGap))
				if ctx.Err() == nil {
					c.log.Warn("client: pull failed", "queue", qs.mq.String(), "err", err)
				}
			} else if ctx.Err() == nil {
				c.log.Warn("client: pull failed", "queue", qs.mq.String(), "err", err)
			}
			sleep(ctx, delay)
			continue
		}
		if qs.pq.Dropped() {
			return
		}
		switch res.code {
		case protocol.RespSuccess:
			next = res.next
			if len(res.msgs) == 0 {
				c.correctOffset(qs, store, next)
				break
			}
			c.dispatch(qs, res.msgs)
		case protocol.RespPullNotFound, protocol.RespPullRetryImmediately:
			next = res.next
			c.correctOffset(qs, store, next)
		case protocol.RespPullOffsetMoved:
			// Our offset is outside the queue: continue where the broker
			// says and make that the committed offset at once.
			c.log.Warn("client: pull offset moved", "queue", qs.mq.String(), "from", next, "to", res.next)
			next = res.next
			if !qs.pq.HasHeld() {
				store.Update(qs.mq, next, false)
				_ = store.persistSync(ctx, []queue.MessageQueue{qs.mq})
			}
		}
		sleep(ctx, c.cfg.PullInterval)
	}
}

// heartbeatRetryDelay is the pause before pulling again after a broker
// asked for a heartbeat first.
const heartbeatRetryDelay = 200 * time.Millisecond

// correctOffset moves the committed offset past filtered or missing
// messages when nothing is waiting to be consumed.
func (c *PushConsumer) correctOffset(qs *queueState, store offset.Store, next int64) {
	if qs.pq.Stats().Count == 0 && !qs.pq.Dropped() {
		store.Update(qs.mq, next, true)
	}
}

func (c *PushConsumer) heldQueues() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.queues)
}

// toExt converts pulled messages for the listener: a retry message shows
// its original topic, as the official clients do.
func toExt(mq queue.MessageQueue, msgs []*protocol.MessageExt) []pqMsg {
	out := make([]pqMsg, len(msgs))
	// One array for the pull's messages, as message.DecodeMessages has:
	// they stay in the process queue together, and one allocation per
	// message cost as many bytes again as the decoded messages.
	arr := make([]MessageExt, len(msgs))
	for i, m := range msgs {
		e := &arr[i]
		*e = MessageExt{MessageExt: *m, Queue: mq}
		if rt := m.Property(protocol.PropertyRetryTopic); rt != "" && queue.IsRetryTopic(m.Topic) {
			e.Topic = rt
		}
		out[i] = pqMsg{e}
	}
	return out
}
