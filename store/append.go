package store

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
)

// appendPlan holds, for each message of an OpAppend, the places inside the
// finished batch that depend on the offsets Apply assigns. They are slices
// of the batch's own buffer, taken after the batch stopped growing.
type appendPlan struct {
	slots []appendSlot
}

type appendSlot struct {
	logKey  []byte   // 8-byte physical offset at the end of the log key
	rec     []byte   // the record (queueOffset, physicalOffset, storeTimestamp)
	cqKey   []byte   // 8-byte queue offset at the end of the entry key
	cqValue []byte   // the whole entry
	idx     [][]byte // per index entry: key tail (phys) then value (ts), alternating
}

// buildAppend validates op and writes its records, queue entries and index
// entries into b with zeros where offsets go.
func buildAppend(b *pebble.Batch, op *Op) (*appendPlan, error) {
	if len(op.Messages) == 0 {
		return nil, fmt.Errorf("%w: append of no messages", ErrInvalidOp)
	}
	var key []byte
	var zero [consumequeue.EntrySize]byte
	nIdx := make([]int, len(op.Messages))
	for i := range op.Messages {
		m := &op.Messages[i]
		if err := checkAppend(m); err != nil {
			return nil, err
		}
		key = commitlog.AppendKey(key[:0], 0)
		_ = b.Set(key, m.Record, nil)
		key = consumequeue.AppendKey(key[:0], m.Topic, m.QueueID, 0)
		_ = b.Set(key, zero[:], nil)
		for _, k := range m.Keys {
			if !indexable(k) {
				continue // recordIndexKeys skips the same keys
			}
			key = index.AppendKey(key[:0], index.KindKey, m.Topic, k, 0)
			_ = b.Set(key, zero[:8], nil)
			nIdx[i]++
		}
		if indexable(m.UniqKey) {
			key = index.AppendKey(key[:0], index.KindUniq, m.Topic, m.UniqKey, 0)
			_ = b.Set(key, zero[:8], nil)
			nIdx[i]++
		}
	}
	// The batch is complete: its buffer no longer moves. Walk it in the
	// order the entries were added and keep the slices to patch.
	plan := &appendPlan{slots: make([]appendSlot, len(op.Messages))}
	total := 0
	for _, n := range nIdx {
		total += 2 * n
	}
	idxBacking := make([][]byte, 0, total) // one allocation for every slot's idx
	r := batchrepr.Read(b.Repr())
	var bad error
	next := func() (k, v []byte) {
		_, k, v, ok, err := r.Next()
		if (!ok || err != nil || len(k) < 8) && bad == nil {
			bad = fmt.Errorf("store: batch does not read back as built: %v", err)
		}
		if bad != nil {
			return make([]byte, 8), make([]byte, consumequeue.EntrySize)
		}
		return k, v
	}
	for i := range plan.slots {
		sl := &plan.slots[i]
		k, v := next()
		sl.logKey, sl.rec = k[len(k)-8:], v
		k, v = next()
		sl.cqKey, sl.cqValue = k[len(k)-8:], v
		start := len(idxBacking)
		for j := 0; j < nIdx[i]; j++ {
			k, v = next()
			idxBacking = append(idxBacking, k[len(k)-8:], v)
		}
		sl.idx = idxBacking[start:len(idxBacking):len(idxBacking)]
	}
	if bad != nil {
		return nil, bad
	}
	return plan, nil
}

// assignAppendLocked assigns offsets and the store time to a built append
// and patches them into the batch: the deterministic core of an append.
func (s *Store) assignAppendLocked(op *Op, plan *appendPlan) (*ApplyResult, *pending) {
	p := &pending{nextPhys: s.nextPhys, lastStoreTs: s.lastStoreTs, newMinPhys: -1}
	ts := max(op.Timestamp, p.lastStoreTs)
	p.lastStoreTs = ts
	p.queueNext = make(map[QueueID]int64, 1)
	res := &ApplyResult{Appended: make([]Appended, len(op.Messages))}
	be := binary.BigEndian
	for i := range op.Messages {
		m := &op.Messages[i]
		sl := &plan.slots[i]
		id := QueueID{Topic: m.Topic, ID: m.QueueID}
		off, ok := p.queueNext[id]
		if !ok {
			if q := s.queue(m.Topic, m.QueueID); q != nil {
				off = q.next
			}
		}
		p.queueNext[id] = off + 1
		phys := p.nextPhys
		size := int32(len(sl.rec))
		be.PutUint64(sl.logKey, uint64(phys))
		protocol.PatchQueueOffset(sl.rec, off)
		protocol.PatchPhysicalOffset(sl.rec, phys)
		protocol.PatchStoreTimestamp(sl.rec, ts)
		be.PutUint64(sl.cqKey, uint64(off))
		consumequeue.Entry{PhysOffset: phys, Size: size, TagsCode: m.TagsCode, StoreTimestamp: ts}.AppendEncode(sl.cqValue[:0])
		for j := 0; j < len(sl.idx); j += 2 {
			be.PutUint64(sl.idx[j], uint64(phys))
			be.PutUint64(sl.idx[j+1], uint64(ts))
		}
		res.Appended[i] = Appended{QueueOffset: off, PhysOffset: phys, Size: size, StoreTimestamp: ts}
		p.nextPhys += int64(size)
	}
	return res, p
}
