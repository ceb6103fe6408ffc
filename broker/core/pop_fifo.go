package core

import (
	"time"

	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// A FIFO group's queue (Java's ConsumerOrderInfoManager, kept here as
// in-flight records through store ops): a pop takes the queue's next batch
// from the group's committed offset, and the queue gives no other batch
// while any message of it is neither acknowledged nor visible again (its
// invisible time passed). A pop with the batch's attempt id gets the same
// batch again. Acknowledgements commit the group's offset up to the first
// message not acknowledged; one acknowledged past it is kept as an acked
// record, not delivered again. A message's records count its deliveries;
// past the group's reconsume limit it goes to the %DLQ% and counts as
// acknowledged. Every change to a queue's records holds the queue's lock.

// fifoBlocked says until when a FIFO queue gives no new batch (0: it
// does), for a pop with attemptID: a message of the batch neither
// acknowledged nor visible again blocks it, unless the pop is the batch's
// own attempt.
func fifoBlocked(recs []pop.Entry, nowMs int64, attemptID string) int64 {
	var until int64
	for _, e := range recs {
		if e.Acked || e.InvisibleUntil <= nowMs || attemptID != "" && e.AttemptID == attemptID {
			continue
		}
		until = max(until, e.InvisibleUntil)
	}
	return until
}

// fifoSettle is where a FIFO queue's records leave the group's offset:
// at its first record not acknowledged, or past everything (scanned, the
// batches' next offsets) when all are; never behind committed. It returns
// the offset and the records below it, which are done.
func fifoSettle(recs []pop.Entry, committed, scanned int64) (int64, []pop.Key) {
	commit := scanned
	pending := false
	for _, e := range recs {
		if !e.Acked {
			if !pending || e.Offset < commit {
				commit = e.Offset
			}
			pending = true
		}
	}
	if !pending {
		for _, e := range recs {
			commit = max(commit, e.NextOffset, e.Offset+1)
		}
	}
	commit = max(commit, committed)
	var done []pop.Key
	for _, e := range recs {
		if e.Offset < commit {
			done = append(done, e.Key)
		}
	}
	return commit, done
}

// popOrderly pops a FIFO queue's next batch, or its current one again for
// the batch's attempt id, holding the queue's lock.
func (c *Core) popOrderly(run *popRun, qk pop.QueueKey, now time.Time, res *PopResult) (*popWait, int64, error) {
	st := c.store()
	key := longpoll.Key{Topic: qk.Topic, QueueID: qk.QueueID}
	nowMs, inv := now.UnixMilli(), run.r.InvisibleTime.Milliseconds()
	recs := c.inflight.Queue(qk)
	if until := fifoBlocked(recs, nowMs, run.r.AttemptID); until > 0 {
		return &popWait{key: key, offset: st.MaxOffset(qk.Topic, qk.QueueID), until: time.UnixMilli(until)}, 0, nil
	}
	okey := offsets.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID}
	committed, hadOffset := c.offsets.Get(okey)
	start := c.popOffset(qk.Group, qk.Topic, qk.QueueID, run.r.FromMin)
	byOff := make(map[int64]pop.Entry, len(recs))
	acked := 0
	for _, e := range recs {
		byOff[e.Offset] = e
		if e.Acked && e.Offset >= start {
			acked++
		}
	}
	want := run.r.MaxMessages - len(res.Messages)
	msgs, next, maxOff, err := c.popRead(run, qk, start, want+acked)
	if err != nil {
		return nil, 0, err
	}
	scanned := next
	var deliver []*message.MessageExt
	var changed []pop.Entry
	for _, m := range msgs {
		prev, had := byOff[m.QueueOffset]
		if had && prev.Acked {
			continue
		}
		if len(deliver) == want {
			scanned = m.QueueOffset // the rest waits for the next batch
			break
		}
		times := int32(0)
		if had {
			times = prev.ReconsumeTimes
			if run.r.AttemptID == "" || prev.AttemptID != run.r.AttemptID {
				times++ // delivered again, not the same attempt's retry
			}
		}
		e := pop.Entry{
			Key: pop.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: m.QueueOffset},
			Record: pop.Record{Orderly: true, PopTime: nowMs, InvisibleUntil: nowMs + inv, CkOffset: start,
				CommitLogOffset: m.CommitLogOffset, ReconsumeTimes: times, AttemptID: run.r.AttemptID},
		}
		if had && e.PopTime <= prev.PopTime {
			e.PopTime = prev.PopTime + 1 // a new handle, never the old one's
			e.InvisibleUntil = e.PopTime + inv
		}
		if times > run.maxTimes {
			m.ReconsumeTimes = times - 1
			if err := c.popToDLQ(qk.Group, m, run.maxTimes); err != nil {
				return nil, 0, err
			}
			e.Acked = true // done with: the offset may pass it
		} else {
			deliver = append(deliver, m)
		}
		changed = append(changed, e)
	}
	for i := range changed {
		changed[i].NextOffset = scanned
		byOff[changed[i].Offset] = changed[i]
	}
	all := make([]pop.Entry, 0, len(byOff))
	for _, e := range byOff {
		all = append(all, e)
	}
	floor := committed
	if !hadOffset {
		floor = start
	}
	commit, done := fifoSettle(all, floor, scanned)
	if len(changed) == 0 && commit == committed && hadOffset {
		return &popWait{key: key, offset: max(maxOff, next)}, max(0, maxOff-next), nil
	}
	if err := c.writeFIFO(qk, changed, done, commit); err != nil {
		return nil, 0, err
	}
	for _, m := range deliver {
		res.Messages = append(res.Messages, c.popped(qk, m, byOff[m.QueueOffset].Record, true))
	}
	rest := max(0, maxOff-scanned)
	if len(deliver) == 0 {
		return &popWait{key: key, offset: max(maxOff, next)}, rest, nil
	}
	return nil, rest, nil
}

// writeFIFO writes a FIFO queue's changed records, drops those done and
// commits the offset, in one store op, then in memory.
func (c *Core) writeFIFO(qk pop.QueueKey, changed []pop.Entry, done []pop.Key, commit int64) error {
	gone := make(map[int64]bool, len(done))
	for _, k := range done {
		gone[k.Offset] = true
	}
	op := &store.Op{Kind: store.OpInFlight, InFlightDelete: done,
		Offsets: []store.OffsetCommit{{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: commit}}}
	for _, e := range changed {
		if !gone[e.Offset] {
			op.InFlightPut = append(op.InFlightPut, store.InFlight{InFlightKey: e.Key, Value: e.Record.Marshal()})
		}
	}
	if err := c.apply(op); err != nil {
		return err
	}
	for _, e := range changed {
		if !gone[e.Offset] {
			c.inflight.Put(e.Key, e.Record)
		}
	}
	for _, k := range done {
		c.inflight.Delete(k)
	}
	c.offsets.Commit(offsets.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID}, commit)
	return nil
}
