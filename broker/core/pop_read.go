package core

import (
	"time"

	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// popReadRounds bounds the reads one pop makes of a queue whose messages
// its filter skips (each read scans a few hundred entries at least).
const popReadRounds = 8

// popQueue pops from one queue of topic (the topic asked for or the
// group's retry topic) into res, holding the queue's lock: another pop
// reading it is passed, as Java passes a queue it cannot lock. It returns
// what to wait on when it popped nothing, and how many messages the queue
// holds past what was popped.
func (c *Core) popQueue(run *popRun, topic string, q int32, now time.Time, res *PopResult) (*popWait, int64, error) {
	st := c.store()
	key := longpoll.Key{Topic: topic, QueueID: q}
	if run.r.MaxMessages <= len(res.Messages) {
		off, _ := c.offsets.Get(offsets.Key{Group: run.r.Group, Topic: topic, QueueID: q})
		return nil, max(0, st.MaxOffset(topic, q)-off), nil
	}
	// Read before the queue: a wake after it (an ack unblocking a FIFO
	// queue, a pop leaving messages) refuses this pop's hold.
	wakes := c.holds.WakeCount(key)
	qk := pop.QueueKey{Group: run.r.Group, Topic: topic, QueueID: q}
	unlock, ok := c.inflight.TryLockQueue(qk)
	if !ok {
		return &popWait{key: key, offset: st.MaxOffset(topic, q), wakes: wakes}, 0, nil
	}
	before := len(res.Messages)
	var w *popWait
	var rest int64
	var err error
	if run.orderly {
		w, rest, err = c.popOrderly(run, qk, now, res)
	} else {
		w, rest, err = c.popPlain(run, qk, now, res)
	}
	unlock()
	if w != nil {
		w.wakes = wakes
	}
	if err == nil && len(res.Messages) > before && rest > 0 {
		// Messages left for the pops held on the queue; woken once the
		// queue is free for them to read.
		c.holds.WakeKey(key)
	}
	return w, rest, err
}

// peekQueue says whether a queue has something to pop for the group: a
// message past the group's offset (whatever its filter says, as Java's
// NOTIFICATION), on a FIFO queue not blocked by its batch in flight.
func (c *Core) peekQueue(run *popRun, topic string, q int32, now time.Time) (popWait, bool) {
	st := c.store()
	key := longpoll.Key{Topic: topic, QueueID: q}
	w := popWait{key: key, wakes: c.holds.WakeCount(key)}
	maxOff := st.MaxOffset(topic, q)
	w.offset = maxOff
	qk := pop.QueueKey{Group: run.r.Group, Topic: topic, QueueID: q}
	if run.orderly {
		if until := fifoBlocked(c.inflight.Queue(qk), now.UnixMilli(), run.r.AttemptID); until > 0 {
			w.until = time.UnixMilli(until)
			return w, false
		}
	}
	return w, c.popOffset(qk.Group, topic, q, run.r.FromMin) < maxOff
}

// popRead reads up to want messages of a queue from offset for a pop:
// past an offset outside the queue (from where the queue says), and on
// past messages the filter skips, for a few rounds. It returns the
// messages, the offset after the last it examined, and the queue's max.
func (c *Core) popRead(run *popRun, qk pop.QueueKey, offset int64, want int) ([]*message.MessageExt, int64, int64, error) {
	st := c.store()
	var maxOff int64
	for round := 0; round < popReadRounds; round++ {
		got, err := st.Get(qk.Topic, qk.QueueID, offset, want, 0, run.filter)
		if err != nil {
			return nil, offset, 0, errorf(Internal, "store read failed: %v", err)
		}
		maxOff = got.MaxOffset
		switch got.Status {
		case store.GetFound:
			msgs, err := message.DecodeMessagesRaw(got.Messages)
			if err != nil {
				return nil, offset, maxOff, errorf(Internal, "stored messages of %s/%d do not decode: %v", qk.Topic, qk.QueueID, err)
			}
			return msgs, got.NextBeginOffset, maxOff, nil
		case store.GetOffsetTooSmall, store.GetOffsetOverflowBadly, store.GetOffsetFoundNull:
			// The offset is outside the queue (retention, a reset):
			// resume where the queue says, as Java's pop does.
			if got.NextBeginOffset == offset {
				return nil, offset, maxOff, nil
			}
			offset = got.NextBeginOffset
		case store.GetNoMatchedMessage, store.GetMessageWasRemoving, store.GetNoMatchedLogicQueue:
			if got.NextBeginOffset <= offset {
				return nil, offset, maxOff, nil
			}
			offset = got.NextBeginOffset // skipped by the filter: done with
		default: // nothing past offset
			return nil, offset, maxOff, nil
		}
	}
	return nil, offset, maxOff, nil
}

// popOffset is where a group's pop reads a queue: its committed offset,
// or for a queue it never consumed, where Java's getInitOffset starts.
func (c *Core) popOffset(group, topic string, q int32, fromMin bool) int64 {
	if off, ok := c.offsets.Get(offsets.Key{Group: group, Topic: topic, QueueID: q}); ok {
		return off
	}
	st := c.store()
	min := st.MinOffset(topic, q)
	if fromMin || isRetryTopic(topic) || min <= 0 {
		return min
	}
	return max(st.MaxOffset(topic, q)-1, 0) // "pop the last one"
}

// popPlain pops from a queue for a plain (not FIFO) pop: the messages
// read become in-flight records and the group's offset moves past them,
// in one store op. A message already reconsumed more than the group
// allows goes to its %DLQ% instead (the proxy's filter of what a pop
// returns).
func (c *Core) popPlain(run *popRun, qk pop.QueueKey, now time.Time, res *PopResult) (*popWait, int64, error) {
	want := run.r.MaxMessages - len(res.Messages)
	start := c.popOffset(qk.Group, qk.Topic, qk.QueueID, run.r.FromMin)
	msgs, next, maxOff, err := c.popRead(run, qk, start, want)
	if err != nil {
		return nil, 0, err
	}
	rest := max(0, maxOff-next)
	key := longpoll.Key{Topic: qk.Topic, QueueID: qk.QueueID}
	if len(msgs) == 0 && next == start {
		if cur, ok := c.offsets.Get(offsets.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID}); !ok || cur != start {
			// A queue never consumed starts here: say so, as Java's
			// getInitOffset commits, so it stays put for the next pop.
			if err := c.commitPopOffset(qk, start); err != nil {
				return nil, 0, err
			}
		}
		return &popWait{key: key, offset: max(maxOff, next)}, rest, nil
	}
	nowMs, inv := now.UnixMilli(), run.r.InvisibleTime.Milliseconds()
	entries := make([]pop.Entry, 0, len(msgs))
	var puts []store.InFlight
	var kept []*message.MessageExt
	for _, m := range msgs {
		if m.ReconsumeTimes > run.maxTimes {
			if err := c.popToDLQ(qk.Group, m, run.maxTimes); err != nil {
				return nil, 0, err
			}
			continue
		}
		e := pop.Entry{
			Key:    pop.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: m.QueueOffset},
			Record: pop.Record{PopTime: nowMs, InvisibleUntil: nowMs + inv, CkOffset: start, CommitLogOffset: m.CommitLogOffset},
		}
		entries = append(entries, e)
		puts = append(puts, store.InFlight{InFlightKey: e.Key, Value: e.Record.Marshal()})
		kept = append(kept, m)
	}
	op := &store.Op{Kind: store.OpInFlight, InFlightPut: puts,
		Offsets: []store.OffsetCommit{{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: next}}}
	if err := c.apply(op); err != nil {
		return nil, 0, err
	}
	for _, e := range entries {
		c.inflight.Put(e.Key, e.Record)
	}
	if len(entries) > 0 {
		c.popArrived()
	}
	c.offsets.Commit(offsets.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID}, next)
	for i, m := range kept {
		res.Messages = append(res.Messages, c.popped(qk, m, entries[i].Record, false))
	}
	if len(kept) == 0 {
		return &popWait{key: key, offset: max(maxOff, next)}, rest, nil
	}
	return nil, rest, nil
}

// commitPopOffset moves a group's offset on a queue, durably.
func (c *Core) commitPopOffset(qk pop.QueueKey, off int64) error {
	if err := c.commitOffsets([]store.OffsetCommit{{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: off}}); err != nil {
		return err
	}
	c.offsets.Commit(offsets.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID}, off)
	return nil
}

// popped is what a pop returns of a message it made in flight as rec.
func (c *Core) popped(qk pop.QueueKey, m *message.MessageExt, rec pop.Record, orderly bool) Popped {
	h := pop.Handle{
		CkOffset: rec.CkOffset, PopTime: rec.PopTime, Invisible: rec.InvisibleUntil - rec.PopTime,
		ReviveQueue: pop.PlainReviveQueue, TopicType: pop.TypeOf(qk.Group, qk.Topic), BrokerName: c.cfg.BrokerName,
		QueueID: qk.QueueID, QueueOffset: m.QueueOffset, CommitLogOffset: m.CommitLogOffset,
	}
	if orderly {
		h.ReviveQueue = pop.OrderlyReviveQueue
		m.ReconsumeTimes = rec.ReconsumeTimes
	}
	m.Topic = pop.OriginTopic(qk.Group, qk.Topic)
	return Popped{Message: m, Handle: h.String(), DeliveryAttempt: m.ReconsumeTimes + 1, InvisibleUntil: time.UnixMilli(rec.InvisibleUntil)}
}

// popToDLQ sends a popped message past its group's reconsume limit to the
// group's %DLQ%. A DLQ refused for good (its name too long, unwritable)
// drops the message and says so, rather than stop the group's queue.
func (c *Core) popToDLQ(group string, m *message.MessageExt, maxTimes int32) error {
	err := c.giveBack(m, giveBack{group: group, maxTimes: maxTimes, toDLQ: true})
	if err != nil && refusedForGood(err) {
		c.log.Error("broker: a message past its reconsume limit is dropped: its DLQ is refused",
			"group", group, "topic", m.Topic, "offset", m.QueueOffset, "err", err)
		return nil
	}
	return err
}

// isRetryTopic says whether topic is a %RETRY% topic.
func isRetryTopic(topic string) bool {
	return len(topic) > len(retryGroupPrefix) && topic[:len(retryGroupPrefix)] == retryGroupPrefix
}
