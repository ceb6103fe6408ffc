package client

import (
	"sync"
	"time"

	"github.com/runnelmq/runnel/internal/periodic"
)

// runningTasks tracks concurrent listener calls in flight, for
// ConsumeTimeout (RocketMQ's ProcessQueue.cleanExpiredMsg, which looks at
// each message's CONSUME_START_TIME).
type runningTasks struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*runningTask
}

type runningTask struct {
	id      uint64
	task    *consumeTask
	started time.Time
	expired bool // set by expireSlow; the call's result is then ignored
}

func (r *runningTasks) start(t *consumeTask, now time.Time) *runningTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[uint64]*runningTask{}
	}
	r.next++
	rt := &runningTask{id: r.next, task: t, started: now}
	r.m[rt.id] = rt
	return rt
}

// finish removes rt and reports whether its result still counts.
func (r *runningTasks) finish(rt *runningTask) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, rt.id)
	return !rt.expired
}

// expired marks and returns the calls started before deadline.
func (r *runningTasks) expired(deadline time.Time) []*runningTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runningTask
	for id, rt := range r.m {
		if rt.started.Before(deadline) {
			rt.expired = true
			delete(r.m, id)
			out = append(out, rt)
		}
	}
	return out
}

// expireLoop runs expireSlow every ConsumeTimeout/4 until the consumer
// stops.
func (c *PushConsumer) expireLoop() {
	periodic.Run(c.life.Done(), max(c.cfg.ConsumeTimeout/4, time.Millisecond), c.expireSlow)
}

// expireSlow sends the messages of listener calls running longer than
// ConsumeTimeout back for redelivery and removes them from their process
// queues, so the committed offset can move past them; the calls' own
// results are ignored. A message whose send-back fails stays in the process
// queue and is consumed again locally.
func (c *PushConsumer) expireSlow() {
	_, store, ok := c.state()
	if !ok {
		return
	}
	for _, rt := range c.running.expired(c.cfg.Now().Add(-c.cfg.ConsumeTimeout)) {
		qs := rt.task.qs
		if qs.pq.Dropped() {
			continue
		}
		var sent []pqMsg
		for _, m := range rt.task.msgs {
			if err := c.sendBack(qs.ctx, m.m, 3+m.m.ReconsumeTimes); err != nil {
				c.log.Warn("client: consume timeout: send back failed", "msgId", m.m.MsgID, "err", err)
				continue
			}
			sent = append(sent, m)
		}
		c.log.Warn("client: listener call timed out; messages sent back", "queue", qs.mq.String(),
			"messages", len(sent), "timeout", c.cfg.ConsumeTimeout)
		if off := qs.pq.Remove(sent); off >= 0 && !qs.pq.Dropped() {
			store.Update(qs.mq, off, true)
		}
		if failed := unsent(rt.task.msgs, sent); len(failed) > 0 {
			// Not sent back: consume them again here later, as a failed
			// call's messages are.
			c.spawn(func() {
				if sleep(qs.ctx, c.cfg.RetryLocalDelay) && !qs.pq.Dropped() {
					c.tasks.push(consumeTask{qs: qs, msgs: failed})
				}
			})
		}
	}
}

func unsent(all, sent []pqMsg) []pqMsg {
	gone := map[int64]bool{}
	for _, m := range sent {
		gone[m.QueueOffset()] = true
	}
	var out []pqMsg
	for _, m := range all {
		if !gone[m.QueueOffset()] {
			out = append(out, m)
		}
	}
	return out
}
