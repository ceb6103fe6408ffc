package core

import (
	"errors"
	"time"

	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// AckEntry is one acknowledgement of a batch: a popped message of Topic
// (the topic the consumer popped, or the retry topic a Java remoting
// client names) by its receipt handle.
type AckEntry struct {
	Group  string
	Topic  string
	Handle string
}

// Ack acknowledges a popped message by its receipt handle (Java
// AckMessageProcessor, the proxy's AckMessageActivity): it is not
// delivered again, and a FIFO group's offset moves past it once every
// message before it is acknowledged too. A malformed or forged handle, or
// one naming a message no longer in flight (acknowledged, its invisible
// time changed, redelivered), is refused as InvalidReceipt; one whose
// invisible time passed as ExpiredReceipt (the message comes back).
func (c *Core) Ack(group, topic, handle string) error {
	return c.BatchAck([]AckEntry{{Group: group, Topic: topic, Handle: handle}})[0]
}

// BatchAck acknowledges several popped messages (BATCH_ACK_MESSAGE, a gRPC
// AckMessage's entries): one store op for the plain pops' records however
// many, one per FIFO queue. It returns each entry's refusal or nil.
func (c *Core) BatchAck(entries []AckEntry) []error {
	errs := make([]error, len(entries))
	if !c.be.IsLeader() {
		for i := range errs {
			errs[i] = c.serviceNotAvailable()
		}
		return errs
	}
	nowMs := c.cfg.Now().UnixMilli()
	var plain []int
	fifo := map[pop.QueueKey][]int{}
	keys := make([]pop.Key, len(entries))
	handles := make([]pop.Handle, len(entries))
	for i, e := range entries {
		h, k, err := c.parseReceipt(e.Group, e.Topic, e.Handle, nowMs)
		if err != nil {
			errs[i] = err
			continue
		}
		keys[i], handles[i] = k, h
		if h.Orderly() {
			qk := pop.QueueOf(k)
			fifo[qk] = append(fifo[qk], i)
		} else {
			plain = append(plain, i)
		}
	}
	if len(plain) > 0 {
		c.ackPlain(plain, keys, handles, errs, nowMs)
	}
	for qk, idx := range fifo {
		c.ackOrderly(qk, idx, keys, handles, errs, nowMs)
	}
	return errs
}

// parseReceipt parses a handle given for group and topic and names its
// record. It refuses a handle that does not parse, is another broker's, or
// has expired.
func (c *Core) parseReceipt(group, topic, handle string, nowMs int64) (pop.Handle, pop.Key, error) {
	h, err := pop.ParseHandle(handle)
	if err != nil {
		return h, pop.Key{}, errorf(InvalidReceipt, "receipt handle is invalid: %v", err)
	}
	if h.BrokerName != c.cfg.BrokerName {
		return h, pop.Key{}, errorf(InvalidReceipt, "receipt handle is invalid: it is broker %s's, not %s's", h.BrokerName, c.cfg.BrokerName)
	}
	if h.Expiry() <= nowMs {
		return h, pop.Key{}, expiredReceipt(h.Expiry())
	}
	k := pop.Key{Group: group, Topic: pop.RealTopic(h.TopicType, group, topic), QueueID: h.QueueID, Offset: h.QueueOffset}
	return h, k, nil
}

func expiredReceipt(expiry int64) error {
	return errorf(ExpiredReceipt, "receipt handle is expired: the message became visible again at %s",
		time.UnixMilli(expiry).UTC().Format(time.RFC3339Nano))
}

// inFlight returns the record a handle names while it is in flight as
// the handle says (the caller holds its lock).
func (c *Core) inFlight(k pop.Key, h pop.Handle, nowMs int64) (pop.Record, error) {
	rec, ok := c.inflight.Get(k)
	if !ok || rec.PopTime != h.PopTime || rec.Orderly != h.Orderly() || rec.Acked {
		return rec, errorf(InvalidReceipt,
			"receipt handle is invalid: no message of group %s is in flight from %s/%d at offset %d under it (acknowledged, changed or redelivered since?)",
			k.Group, k.Topic, k.QueueID, k.Offset)
	}
	if rec.InvisibleUntil <= nowMs {
		return rec, expiredReceipt(rec.InvisibleUntil)
	}
	return rec, nil
}

// ackPlain acknowledges plain pops' records: one op deleting them all.
func (c *Core) ackPlain(idx []int, keys []pop.Key, handles []pop.Handle, errs []error, nowMs int64) {
	lockKeys := make([]pop.Key, len(idx))
	for j, i := range idx {
		lockKeys[j] = keys[i]
	}
	unlock := c.inflight.LockRecords(lockKeys)
	defer unlock()
	var del []store.InFlightKey
	var ok []int
	for _, i := range idx {
		if _, err := c.inFlight(keys[i], handles[i], nowMs); err != nil {
			errs[i] = err
			continue
		}
		del = append(del, keys[i])
		ok = append(ok, i)
	}
	if len(del) == 0 {
		return
	}
	if err := c.apply(&store.Op{Kind: store.OpInFlight, InFlightDelete: del}); err != nil {
		for _, i := range ok {
			errs[i] = err
		}
		return
	}
	for _, k := range del {
		c.inflight.Delete(k)
	}
}

// ackOrderly acknowledges FIFO records of one queue: marked acked, the
// offset committed as far as it may go, in one op.
func (c *Core) ackOrderly(qk pop.QueueKey, idx []int, keys []pop.Key, handles []pop.Handle, errs []error, nowMs int64) {
	unlock := c.inflight.LockQueue(qk)
	settled := false
	defer func() {
		unlock()
		if settled {
			c.wakeQueue(qk)
		}
	}()
	var changed []pop.Entry
	var ok []int
	for _, i := range idx {
		rec, err := c.inFlight(keys[i], handles[i], nowMs)
		if err != nil {
			errs[i] = err
			continue
		}
		rec.Acked = true
		changed = append(changed, pop.Entry{Key: keys[i], Record: rec})
		ok = append(ok, i)
	}
	if len(changed) == 0 {
		return
	}
	if err := c.settleFIFO(qk, changed); err != nil {
		for _, i := range ok {
			errs[i] = err
		}
		return
	}
	settled = true
}

// lockReceipt locks what a handle's change takes: its FIFO queue, or its
// plain pop's record. The unlock it returns wakes, once the queue is
// free, the pops held on a FIFO queue (its batch's visibility may have
// moved).
func (c *Core) lockReceipt(h pop.Handle, k pop.Key) (unlock func()) {
	if !h.Orderly() {
		return c.inflight.LockRecords([]pop.Key{k})
	}
	qk := pop.QueueOf(k)
	u := c.inflight.LockQueue(qk)
	return func() {
		u()
		c.wakeQueue(qk)
	}
}

// wakeQueue wakes the pops held on a FIFO queue that may have been
// unblocked, once its lock is free for them to read it.
func (c *Core) wakeQueue(qk pop.QueueKey) {
	c.holds.WakeKey(longpoll.Key{Topic: qk.Topic, QueueID: qk.QueueID})
}

// settleFIFO writes a FIFO queue's changed records and moves the group's
// offset as far as they let it. The caller holds the queue's lock, and
// wakes the pops held on the queue once it lets it go (wakeQueue).
func (c *Core) settleFIFO(qk pop.QueueKey, changed []pop.Entry) error {
	recs := c.inflight.Queue(qk)
	for _, e := range changed {
		for i := range recs {
			if recs[i].Offset == e.Offset {
				recs[i] = e
			}
		}
	}
	committed, _ := c.offsets.Get(offsets.Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID})
	commit, done := fifoSettle(recs, committed, committed)
	return c.writeFIFO(qk, changed, done, commit)
}

// ChangeInvisible sets how long a popped message stays invisible from now
// (Java ChangeInvisibleTimeProcessor; the gRPC ChangeInvisibleDuration, a
// push consumer's renewal and its nack) and returns its new receipt
// handle: the old one no longer names it. It refuses handles as Ack does.
func (c *Core) ChangeInvisible(group, topic, handle string, d time.Duration) (string, error) {
	if d < 0 || d > MaxInvisibleTime {
		return "", errorf(InvalidArgument, "invisible time %v is not in [0, %v]", d, MaxInvisibleTime)
	}
	if !c.be.IsLeader() {
		return "", c.serviceNotAvailable()
	}
	nowMs := c.cfg.Now().UnixMilli()
	h, k, err := c.parseReceipt(group, topic, handle, nowMs)
	if err != nil {
		return "", err
	}
	defer c.lockReceipt(h, k)()
	rec, err := c.inFlight(k, h, nowMs)
	if err != nil {
		return "", err
	}
	// A new pop time makes a new handle even within the old one's
	// millisecond.
	rec.PopTime = max(nowMs, rec.PopTime+1)
	rec.InvisibleUntil = rec.PopTime + d.Milliseconds()
	if err := c.apply(&store.Op{Kind: store.OpInFlight, InFlightPut: []store.InFlight{{InFlightKey: k, Value: rec.Marshal()}}}); err != nil {
		return "", err
	}
	c.inflight.Put(k, rec)
	if !rec.Orderly {
		c.popArrived()
	}
	h.PopTime, h.Invisible = rec.PopTime, rec.InvisibleUntil-rec.PopTime
	return h.String(), nil
}

// ForwardToDLQ sends a popped message to its group's %DLQ% at once and
// acknowledges it (the gRPC ForwardMessageToDeadLetterQueue: a FIFO push
// consumer's message that failed its local attempts). It refuses handles
// as Ack does.
func (c *Core) ForwardToDLQ(group, topic, handle string) error {
	if !c.be.IsLeader() {
		return c.serviceNotAvailable()
	}
	nowMs := c.cfg.Now().UnixMilli()
	h, k, err := c.parseReceipt(group, topic, handle, nowMs)
	if err != nil {
		return err
	}
	defer c.lockReceipt(h, k)()
	rec, err := c.inFlight(k, h, nowMs)
	if err != nil {
		return err
	}
	m, err := c.readInFlight(k, rec)
	if err != nil {
		return err
	}
	if rec.Orderly {
		m.ReconsumeTimes = rec.ReconsumeTimes
	}
	g, _ := c.GroupConfig(group)
	if err := c.giveBack(m, giveBack{group: group, maxTimes: popMaxTimes(g.RetryMaxTimes), toDLQ: true}); err != nil {
		return err
	}
	if rec.Orderly {
		rec.Acked = true
		return c.settleFIFO(pop.QueueOf(k), []pop.Entry{{Key: k, Record: rec}})
	}
	if err := c.apply(&store.Op{Kind: store.OpInFlight, InFlightDelete: []store.InFlightKey{k}}); err != nil {
		return err
	}
	c.inflight.Delete(k)
	return nil
}

// errGone is wrapped when an in-flight record's message is no longer
// stored (retention took it).
var errGone = errors.New("core: the message is no longer stored")

// readInFlight reads the message an in-flight record names.
func (c *Core) readInFlight(k pop.Key, rec pop.Record) (*message.MessageExt, error) {
	raw, err := c.store().ReadRecord(rec.CommitLogOffset)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errorf(NoMessage, "the message at %s/%d offset %d: %v", k.Topic, k.QueueID, k.Offset, errGone)
		}
		return nil, errorf(Internal, "read the message at %s/%d offset %d: %v", k.Topic, k.QueueID, k.Offset, err)
	}
	m, _, err := message.DecodeStoredMessage(raw, false)
	if err != nil || m.Topic != k.Topic || m.QueueID != k.QueueID || m.QueueOffset != k.Offset {
		return nil, errorf(NoMessage, "the message at %s/%d offset %d is not at commit log offset %d", k.Topic, k.QueueID, k.Offset, rec.CommitLogOffset)
	}
	return m, nil
}
