package store

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/store/commitlog"

	"github.com/runnelmq/runnel/message"
)

// PutResult is where one message was stored.
type PutResult struct {
	QueueOffset     int64
	CommitLogOffset int64
	Size            int32
	StoreTimestamp  int64
	// StoreHost is the host written into the record.
	StoreHost netip.AddrPort
}

// OffsetMsgID is the message's offsetMsgId (store host + physical offset),
// the msgId of a SEND response. It is built on demand: an append does not
// need it.
func (r PutResult) OffsetMsgID() string { return message.OffsetMsgID(r.StoreHost, r.CommitLogOffset) }

// Put stores msgs in one atomic write and returns once they are
// acknowledged per the flush mode. Each message goes to its own Topic and
// QueueID; its QueueOffset, CommitLogOffset, StoreTimestamp, StoreSize and
// BodyCRC are assigned by the store (msgs are not modified). A message
// without a StoreHost gets Options.StoreHost. A batch send to one queue
// therefore gets consecutive queue offsets.
func (s *Store) Put(msgs []*message.MessageExt) ([]PutResult, error) {
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrInvalidOp)
	}
	// Held from the batch to the publish, as Apply holds it.
	if err := s.readLock(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	sc := newPutScratch(len(msgs))
	defer sc.release()
	op := &sc.op
	*op = Op{Kind: OpAppend, Timestamp: s.opts.Now().UnixMilli(), Messages: sc.msgs}
	b, err := s.buildPut(op, msgs, sc)
	if err != nil {
		return nil, err
	}
	if err := s.refuseAppend(b.Len(), s.checkDisk); err != nil {
		_ = b.Close()
		return nil, err
	}
	res, err := s.apply(op, b, &sc.plan)
	if err != nil {
		return nil, err
	}
	out := make([]PutResult, len(res.Appended))
	for i, a := range res.Appended {
		host := msgs[i].StoreHost
		if !host.IsValid() {
			host = s.opts.StoreHost
		}
		out[i] = PutResult{
			QueueOffset: a.QueueOffset, CommitLogOffset: a.PhysOffset, Size: a.Size,
			StoreTimestamp: a.StoreTimestamp, StoreHost: host,
		}
	}
	return out, nil
}

// AppendOp builds the OpAppend that Put(msgs) applies, with everything
// Apply does not decide fixed in it: the store time (Options.Now now) and
// each record's store host (Options.StoreHost where unset). Its encoding
// (Marshal), given to ApplyEncoded on any store, does what Put does there
// with the same clock: what a replicated store's leader proposes. Put is
// the local shortcut, encoding each record straight into the batch.
func (s *Store) AppendOp(msgs []*message.MessageExt) (*Op, error) {
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrInvalidOp)
	}
	op := &Op{Kind: OpAppend, Timestamp: s.opts.Now().UnixMilli(), Messages: make([]AppendMessage, len(msgs))}
	total := 0
	for _, m := range msgs {
		if err := checkTarget(m); err != nil {
			return nil, err
		}
		total += message.StoredSize(m) + 16 // + 12 if the store host is v6
	}
	if err := s.refuseAppend(total, s.checkDiskShared); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, total) // one allocation for every record
	for i, m := range msgs {
		if !m.StoreHost.IsValid() {
			c := *m
			c.StoreHost = s.opts.StoreHost
			m = &c
		}
		start := len(buf)
		var err error
		if buf, err = message.AppendStoredMessage(buf, m); err != nil {
			return nil, fmt.Errorf("%w: message %d: %w", ErrInvalidOp, i, err)
		}
		if n := len(buf) - start; n > s.opts.MaxMessageSize {
			return nil, fmt.Errorf("%w: message %d: %d bytes exceeds MaxMessageSize %d", ErrInvalidOp, i, n, s.opts.MaxMessageSize)
		}
		op.Messages[i] = AppendMessage{Record: buf[start:len(buf):len(buf)], Topic: m.Topic, QueueID: m.QueueID,
			TagsCode: message.TagsHashCode(m.Tags()), Keys: m.Keys(), UniqKey: m.UniqKey()}
	}
	return op, nil
}

// putScratch is what a Put needs until it returns, pooled: a single
// message's append otherwise made a dozen small allocations, and a batch's
// slices cost the garbage collector tens of KiB per Put.
type putScratch struct {
	op     Op
	plan   appendPlan
	msgs   []AppendMessage
	sizes  []int
	hashes []uint32
	// props holds every message's properties in name order, message i's
	// ending at propEnd[i]: the map is walked once per message.
	props   []message.Property
	propEnd []int
	one     struct {
		msg     [1]AppendMessage
		size    [1]int
		slot    [1]appendSlot
		hashes  [4]uint32
		props   [8]message.Property
		propEnd [1]int
	}
	// many keeps a batch's slices for the next batch, up to
	// maxPooledBatch messages.
	many batchScratch
}

// batchScratch is the part of a putScratch sized by the batch.
type batchScratch struct {
	msgs     []AppendMessage
	sizes    []int
	slots    []appendSlot
	hashes   []uint32
	props    []message.Property
	propEnd  []int
	appended []Appended
	queues   []*queue
}

// maxPooledBatch bounds the batch whose slices a pooled putScratch keeps,
// so that one huge batch does not pin its memory.
const maxPooledBatch = 256

var putScratchPool = sync.Pool{New: func() any { return new(putScratch) }}

func newPutScratch(n int) *putScratch {
	sc := putScratchPool.Get().(*putScratch)
	if n == 1 {
		sc.msgs, sc.sizes, sc.plan.slots, sc.hashes = sc.one.msg[:], sc.one.size[:], sc.one.slot[:], sc.one.hashes[:0]
		sc.props, sc.propEnd = sc.one.props[:0], sc.one.propEnd[:]
		return sc
	}
	m := &sc.many
	if cap(m.msgs) < n {
		m.msgs, m.sizes, m.slots, m.propEnd = make([]AppendMessage, n), make([]int, n), make([]appendSlot, n), make([]int, n)
		m.hashes = make([]uint32, 0, 2*n)          // a unique id and perhaps a key each
		m.props = make([]message.Property, 0, 4*n) // a handful each
		m.appended, m.queues = make([]Appended, n), make([]*queue, n)
	}
	sc.plan.appendedBuf, sc.plan.queuesBuf = m.appended[:n], m.queues[:n]
	sc.msgs, sc.sizes, sc.plan.slots, sc.propEnd = m.msgs[:n], m.sizes[:n], m.slots[:n], m.propEnd[:n]
	sc.hashes, sc.props = m.hashes[:0], m.props[:0]
	return sc
}

// release clears what points elsewhere (the batch, the messages' strings,
// the queues) and returns sc to the pool.
func (sc *putScratch) release() {
	clear(sc.msgs)
	clear(sc.plan.slots)
	clear(sc.props)
	clear(sc.one.props[:]) // props may have outgrown it
	if len(sc.msgs) > 1 {
		m := &sc.many
		// Keep what appends grew, unless the batch was too big to keep.
		m.hashes, m.props = sc.hashes[:0], sc.props[:0]
		clear(sc.plan.queuesBuf)
		if cap(m.msgs) > maxPooledBatch || cap(m.props) > 16*maxPooledBatch || cap(m.hashes) > 16*maxPooledBatch {
			*m = batchScratch{}
		}
	}
	sc.plan.pending = pending{}
	sc.plan.res = ApplyResult{}
	clear(sc.plan.queues[:])
	clear(sc.plan.queueNext[:])
	sc.plan.appendedBuf, sc.plan.queuesBuf = nil, nil
	sc.op, sc.msgs, sc.sizes, sc.hashes, sc.plan.slots = Op{}, nil, nil, nil, nil
	sc.props, sc.propEnd = nil, nil
	putScratchPool.Put(sc)
}

// buildPut is buildAppend for messages not yet encoded: it encodes each
// straight into the batch (no intermediate copy) and fills op.Messages
// with what assignment needs.
func (s *Store) buildPut(op *Op, msgs []*message.MessageExt, sc *putScratch) (*pebble.Batch, error) {
	sizes, plan := sc.sizes, &sc.plan
	total := 0
	for i, m := range msgs {
		if err := checkTarget(m); err != nil {
			return nil, err
		}
		sc.props = message.SortProperties(sc.props, m.Properties) // kept in sc: release clears it
		sc.propEnd[i] = len(sc.props)
		if !m.StoreHost.IsValid() {
			c := *m
			c.StoreHost = s.opts.StoreHost
			m = &c
		}
		sizes[i] = message.StoredSizeOf(m, sc.props[sc.propStart(i):])
		if sizes[i] > s.opts.MaxMessageSize {
			return nil, fmt.Errorf("%w: message %d: %d bytes exceeds MaxMessageSize %d", ErrInvalidOp, i, sizes[i], s.opts.MaxMessageSize)
		}
		total += sizes[i] + commitlog.KeyLen + 8
	}
	b := s.log.NewBatchWithSize(total + 16)
	var key [commitlog.KeyLen]byte
	commitlog.AppendKey(key[:0], 0)
	for i, m := range msgs {
		if !m.StoreHost.IsValid() {
			c := *m
			c.StoreHost = s.opts.StoreHost
			m = &c
		}
		mp := sc.props[sc.propStart(i):sc.propEnd[i]]
		d := b.SetDeferred(commitlog.KeyLen, sizes[i])
		copy(d.Key, key[:])
		rec, err := message.AppendStoredMessageOf(d.Value[:0:sizes[i]], m, mp)
		if err == nil && (len(rec) != sizes[i] || &rec[0] != &d.Value[0]) {
			err = fmt.Errorf("encoded %d bytes, sized %d", len(rec), sizes[i])
		}
		if err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("%w: message %d: %w", ErrInvalidOp, i, err)
		}
		_ = d.Finish()
		am := AppendMessage{
			Topic: m.Topic, QueueID: m.QueueID,
			TagsCode: message.TagsHashCode(message.PropertyOf(mp, message.PropertyTags)),
			Keys:     strings.Fields(message.PropertyOf(mp, message.PropertyKeys)),
			UniqKey:  message.PropertyOf(mp, message.PropertyUniqClientMessageIDKey),
		}
		op.Messages[i] = am
		n := len(sc.hashes)
		sc.hashes = recordHashes(sc.hashes, am.Topic, am.Keys, am.UniqKey)
		plan.slots[i].hashes = sc.hashes[n:len(sc.hashes):len(sc.hashes)]
	}
	if err := plan.locate(b); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// propStart is where message i's properties begin in sc.props.
func (sc *putScratch) propStart(i int) int {
	if i == 0 {
		return 0
	}
	return sc.propEnd[i-1]
}

// checkTarget refuses a message whose topic or queue id cannot be stored.
func checkTarget(m *message.MessageExt) error {
	if err := checkName("topic", m.Topic); err != nil {
		return err
	}
	if m.QueueID < 0 {
		return fmt.Errorf("%w: queue id %d", ErrInvalidOp, m.QueueID)
	}
	return nil
}
