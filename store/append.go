package store

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// appendPlan holds, for each message of an OpAppend, the places inside the
// finished batch that depend on the offsets Apply assigns. They are slices
// of the batch's own buffer, taken after the batch stopped growing.
type appendPlan struct {
	slots []appendSlot

	// Room for what an append needs until it is published, so that a
	// single-message append allocates it in one piece (see putScratch).
	pending   pending
	res       ApplyResult
	appended  [1]Appended
	queues    [1]*queue
	queueNext [1]queueOffset
	// A batch's results go here when they fit (Put pools them).
	appendedBuf []Appended
	queuesBuf   []*queue
}

type appendSlot struct {
	logKey []byte   // 8-byte physical offset at the end of the log key
	rec    []byte   // the record (queueOffset, physicalOffset, storeTimestamp)
	hashes []uint32 // index hashes of its keys and unique id
}

// buildAppend validates op and writes its records into b with zeros where
// offsets go. Queue and index entries are not keys of their own (see
// derived.go); their index hashes are computed here, outside the lock.
func buildAppend(b *pebble.Batch, op *Op, decoded bool) (*appendPlan, error) {
	if len(op.Messages) == 0 {
		return nil, fmt.Errorf("%w: append of no messages", ErrInvalidOp)
	}
	var key []byte
	plan := &appendPlan{slots: make([]appendSlot, len(op.Messages))}
	var hashes []uint32
	for i := range op.Messages {
		m := &op.Messages[i]
		if err := checkAppend(m, decoded); err != nil {
			return nil, err
		}
		key = commitlog.AppendKey(key[:0], 0)
		_ = b.Set(key, m.Record, nil)
		n := len(hashes)
		hashes = recordHashes(hashes, m.Topic, m.Keys, m.UniqKey)
		plan.slots[i].hashes = hashes[n:len(hashes):len(hashes)]
	}
	return plan, plan.locate(b)
}

// locate finds each record in the complete batch, whose buffer no longer
// moves, walking it in the order the records were added.
func (plan *appendPlan) locate(b *pebble.Batch) error {
	r := batchrepr.Read(b.Repr())
	for i := range plan.slots {
		_, k, v, ok, err := r.Next()
		if !ok || err != nil || len(k) != commitlog.KeyLen {
			return fmt.Errorf("store: batch does not read back as built: %v", err)
		}
		plan.slots[i].logKey, plan.slots[i].rec = k[len(k)-8:], v
	}
	return nil
}

// noteQueueNext records q's new next offset, once per queue: publish
// raises it and fires the arrival hook once for each.
func (p *pending) noteQueueNext(id QueueID, q *queue) {
	for i := range p.queueNext { // few queues per batch
		if p.queueNext[i].q == q {
			p.queueNext[i].off = q.next
			return
		}
	}
	p.queueNext = append(p.queueNext, queueOffset{id, q, q.next})
}

// assignAppendLocked assigns offsets and the store time to a built append,
// patches them into the batch and adds the messages' queue and index
// entries: the deterministic core of an append. When a checkpoint is due it
// writes it into a batch of the database beside the log and returns that;
// else the batch is nil.
func (s *Store) assignAppendLocked(op *Op, plan *appendPlan) (*ApplyResult, *pending, *pebble.Batch) {
	p := &plan.pending
	*p = pending{nextPhys: s.nextPhys, lastStoreTs: s.lastStoreTs, newMinPhys: -1, queueNext: plan.queueNext[:0]}
	ts := max(op.Timestamp, p.lastStoreTs)
	p.lastStoreTs = ts
	res, queues := &plan.res, plan.queues[:]
	res.Appended = plan.appended[:]
	if n := len(op.Messages); n > 1 {
		if len(plan.appendedBuf) == n && len(plan.queuesBuf) == n {
			res.Appended, queues = plan.appendedBuf, plan.queuesBuf
		} else {
			res.Appended, queues = make([]Appended, n), make([]*queue, n)
		}
	}
	be := binary.BigEndian
	s.segMu.Lock()
	for i := range op.Messages {
		m := &op.Messages[i]
		sl := &plan.slots[i]
		id := QueueID{Topic: m.Topic, ID: m.QueueID}
		q := s.queue(m.Topic, m.QueueID)
		if q == nil {
			q = s.addQueueLocked(id)
		}
		queues[i] = q
		off := q.next
		q.next++
		p.noteQueueNext(id, q)
		phys := p.nextPhys
		size := int32(len(sl.rec))
		be.PutUint64(sl.logKey, uint64(phys))
		message.PatchQueueOffset(sl.rec, off)
		message.PatchPhysicalOffset(sl.rec, phys)
		message.PatchStoreTimestamp(sl.rec, ts)
		for _, h := range sl.hashes {
			s.openSeg.Add(h, phys, ts)
		}
		res.Appended[i] = Appended{QueueOffset: off, PhysOffset: phys, Size: size, StoreTimestamp: ts}
		p.nextPhys += int64(size)
	}
	s.segMu.Unlock()
	for i := range op.Messages {
		a := &res.Appended[i]
		m := &op.Messages[i]
		s.appendEntryLocked(QueueID{Topic: m.Topic, ID: m.QueueID}, queues[i], a.QueueOffset, consumequeue.Entry{
			PhysOffset: a.PhysOffset, Size: a.Size, TagsCode: m.TagsCode, StoreTimestamp: a.StoreTimestamp})
	}
	if !s.checkpointDue(p.nextPhys) {
		return res, p, nil
	}
	b := s.db.NewBatch()
	s.checkpointLocked(b, p, p.nextPhys)
	return res, p, b
}
