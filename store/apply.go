package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
	"github.com/runnelmq/runnel/store/meta"
	"github.com/runnelmq/runnel/topicconf"
)

// OpKind says what an Op does.
type OpKind uint8

// Op kinds.
const (
	OpAppend OpKind = iota + 1
	OpCommitOffset
	OpDeleteGroupOffsets
	OpPutTopic
	OpDeleteTopic
	OpSetDelayOffset
	OpPutCheckpoint
	OpTruncate
	OpPutGroup
	OpDeleteGroup
	OpPutAuth
	OpDeleteAuth
	// OpInFlight changes POP's in-flight records (and, in the same
	// batch, consumer offsets): what a pop, an ack, a change of invisible
	// time and a redelivery do to them.
	OpInFlight
)

// Op is one mutation. Every change to the store is an Op passed to Apply
// (or, encoded, to ApplyEncoded), which decides offsets from the store's
// state and the Op alone (never a clock), so replicas applying the same Ops
// in the same order hold byte-identical data. An Op says everything that
// is not decided that way (store time, store host in the records), so its
// encoding (Marshal) is what a replicated log carries.
type Op struct {
	Kind OpKind
	// Timestamp (ms) becomes the storeTimestamp of appended messages
	// (raised, if needed, so that store time never decreases along the log).
	Timestamp int64

	// OpAppend: the messages, all written in one atomic batch.
	Messages []AppendMessage

	// OpCommitOffset: any number of consumer offsets, written in one batch
	// (one sync).
	Offsets []OffsetCommit

	// OpDeleteGroupOffsets: Group. OpDeleteTopic: Topic.
	Group string
	Topic string
	// OpSetDelayOffset: Level and Offset.
	Offset int64

	// OpPutTopic.
	TopicConfig *topicconf.Config
	// OpPutGroup: a consumer group's subscription config. OpDeleteGroup
	// deletes the config of Group (its offsets are OpDeleteGroupOffsets').
	GroupConfig *groupconf.Config

	Level int32

	// OpPutCheckpoint: Name and Value. OpPutAuth: Name and Value, an
	// access-control record (package acl/auth owns its names and
	// values). OpDeleteAuth: Name.
	Name  string
	Value []byte

	// OpTruncate: delete the log below Cutoff (a record boundary) and every
	// queue entry pointing there. QueueMins are hints (computed outside the
	// apply lock) that Apply checks and completes.
	Cutoff    int64
	QueueMins map[QueueID]int64

	// OpInFlight: InFlightDelete's records are deleted, then
	// InFlightPut's written (a record put again replaces the one before),
	// then Offsets committed, all in one batch (one sync). Any of the
	// three may be empty, not all.
	InFlightPut    []InFlight
	InFlightDelete []InFlightKey
}

// InFlightKey names one popped message a consumer group has in flight:
// the group, the topic and queue it was read from (a retry topic's, for a
// message that came back) and its queue offset there.
type InFlightKey struct {
	Group   string
	Topic   string
	QueueID int32
	Offset  int64
}

// InFlight is one in-flight record: its key, and its value, which package
// broker/pop encodes and the store keeps as it is.
type InFlight struct {
	InFlightKey
	Value []byte
}

// AppendMessage is one message of an OpAppend.
type AppendMessage struct {
	// Record is the stored-message encoding. Apply copies it; the stored
	// copy carries the assigned queueOffset, physicalOffset and
	// storeTimestamp (Record itself is not modified).
	Record   []byte
	Topic    string
	QueueID  int32
	TagsCode int64
	// Keys and UniqKey are what is indexed; they must be the record's own
	// KEYS words and UNIQ_KEY, because recovery rebuilds the index from the
	// records (Verify checks this).
	Keys    []string
	UniqKey string
}

// Appended is where Apply put one message.
type Appended struct {
	QueueOffset    int64
	PhysOffset     int64
	Size           int32
	StoreTimestamp int64
}

// ApplyResult reports what an Op did.
type ApplyResult struct {
	Appended []Appended
}

// pending is the in-memory effect of an Op, made visible only after the
// batch is durable.
type pending struct {
	nextPhys    int64
	lastStoreTs int64
	queueNext   []queueOffset  // appends: each queue's new next offset
	queueMin    []queueOffset  // truncate: each queue's new min offset
	newMinPhys  int64          // truncate: new log start, else -1
	dropTopic   string         // delete topic
	chunks      []chunkDone    // queue chunks the batch wrote
	sealed      *index.Segment // index segment the batch wrote
}

// Apply performs op: it assigns offsets under the apply lock, hands one batch
// to Pebble's commit pipeline, releases the lock, waits for the batch to be
// durable (sharing the wait with concurrent writers), then makes the result
// readable and fires the arrival hook. Readers never see a write before it
// is acknowledged.
func (s *Store) Apply(op *Op) (*ApplyResult, error) { return s.applyOp(op, false) }

// applyOp is Apply; decoded says op comes from DecodeOp, which read each
// appended message's fields from its record, so they need no check
// against it.
func (s *Store) applyOp(op *Op, decoded bool) (*ApplyResult, error) {
	// Held from the first batch to the publish: a batch is bound to the
	// database that made it (see reopen).
	if err := s.readLock(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	var lb *pebble.Batch
	var plan *appendPlan
	if op.Kind == OpAppend {
		// The bytes of an append do not depend on the offsets except in
		// fixed places, so the batch is built before taking the lock and
		// only patched under it.
		lb = s.log.NewBatchWithSize(batchSizeHint(op))
		var err error
		if plan, err = buildAppend(lb, op, decoded); err != nil {
			_ = lb.Close()
			return nil, err
		}
	}
	return s.apply(op, lb, plan)
}

// ApplyEncoded decodes an op Marshal encoded and applies it: what a
// replicated log's state machine calls with each entry. Bytes that are not
// an op are an ErrBadOp and change nothing.
func (s *Store) ApplyEncoded(b []byte) (*ApplyResult, error) {
	op, err := DecodeOp(b)
	if err != nil {
		return nil, err
	}
	return s.applyOp(op, true)
}

// queueOffset is an offset an op moves a queue to: its next offset after
// an append, its minimum after a truncation.
type queueOffset struct {
	id  QueueID
	q   *queue
	off int64
}

// apply is Apply once op's log batch is built (lb and plan are nil unless
// op appends). Everything but log records goes into a second batch for the
// database beside the log; both enter their commit pipelines under the
// apply lock, in offset order. An op is acknowledged once what it must
// keep is durable: an append's records and its checkpoint if it has one,
// any other op's batch. The two are not one atomic write:
// recovery trims what the other database says beyond the log's end
// (clampDerived), and a truncation makes its side durable before it
// deletes any log.
func (s *Store) apply(op *Op, lb *pebble.Batch, plan *appendPlan) (*ApplyResult, error) {
	var mb *pebble.Batch // an append makes one only to checkpoint
	if op.Kind != OpAppend {
		mb = s.db.NewBatch()
	}
	if lb == nil && op.Kind == OpTruncate {
		lb = s.log.NewBatch()
	}
	closeAll := func() {
		if mb != nil {
			_ = mb.Close()
		}
		if lb != nil {
			_ = lb.Close()
		}
	}
	s.applyMu.Lock()
	if s.closing {
		s.applyMu.Unlock()
		closeAll()
		return nil, ErrClosed
	}
	if errp := s.failed.Load(); errp != nil && (lb != nil || !s.logOnly.Load()) {
		// A failed log refuses only the ops that write it: offset
		// commits and topic changes go on in the database beside it.
		s.applyMu.Unlock()
		closeAll()
		return nil, *errp
	}
	var res *ApplyResult
	var p *pending
	var err error
	waitMeta := false // mb was handed over without waiting for its sync
	logErr := false   // err came from the log's database
	if plan != nil {
		res, p, mb = s.assignAppendLocked(op, plan)
	} else {
		res, p, err = s.buildLocked(mb, lb, op)
	}
	if err != nil {
		s.applyMu.Unlock()
		closeAll()
		return nil, err
	}
	if op.Kind == OpTruncate {
		// Readers stop at the new minimums first: the queue chunks and
		// index segments go next, and the log only once they are gone.
		s.raiseMins(p)
		if err = s.commitSync(s.db, mb); err == nil {
			err = s.enter(s.log, lb)
		}
	} else {
		// Both sides are waited for below, outside the lock. An append's
		// other side is a checkpoint, when one is due: recovery would
		// rebuild what a lost one held from the log, but a durable one
		// bounds that replay to one interval after a process crash.
		if lb != nil {
			err = s.enter(s.log, lb)
			logErr = err != nil
		}
		if err == nil && mb != nil && !mb.Empty() {
			err = s.enter(s.db, mb)
			waitMeta = true
		}
	}
	if err != nil {
		s.applyMu.Unlock()
		closeAll()
		return nil, s.failDB(fmt.Errorf("apply: %w", err), logErr)
	}
	s.commitLocked(p)
	s.inflight.Add(1)
	s.applyMu.Unlock()
	defer s.inflight.Done()

	if lb != nil {
		err = lb.SyncWait()
		logErr = err != nil
	}
	if waitMeta {
		// Waited for even when the log failed: Pebble's WAL flusher holds
		// mb until its sync ends (ApplyNoSyncWait's contract), and closing
		// it first handed Pebble's pool a batch the flusher still wrote
		// to. A failed sync here means the other database failed too.
		if merr := mb.SyncWait(); merr != nil {
			if err == nil {
				err = merr
			}
			logErr = false
		}
	}
	closeAll()
	if err != nil {
		return nil, s.failDB(fmt.Errorf("sync: %w", err), logErr)
	}
	s.publish(op, p)
	return res, nil
}

// commitSync commits b to db and waits for its WAL sync, returning a
// failed WAL write as an error. Every commit of the store that waits for
// its sync goes through here, never through Pebble's own waiting commit
// (DB.Apply, Batch.Commit, DB.Set... with pebble.Sync): that one hands a
// failed WAL write (ENOSPC, EIO) to Logger.Fatalf as "pebble: fatal commit
// error", which exits the process, so a broker on a full disk vanished
// instead of latching ErrFailed, and a test binary failed naming no test.
// ApplyNoSyncWait returns the same failure through SyncWait.
func (s *Store) commitSync(db *pebble.DB, b *pebble.Batch) error {
	if err := s.enter(db, b); err != nil {
		return err
	}
	return b.SyncWait()
}

// enter hands b to db's commit pipeline and returns once it is applied,
// without waiting for its WAL sync (b.SyncWait does); it counts the sync
// (Stats). Without a WAL (NoWAL) there is no sync: Pebble refuses to be
// asked for one, and SyncWait on a batch committed without it returns at
// once.
func (s *Store) enter(db *pebble.DB, b *pebble.Batch) error {
	if s.opts.NoWAL {
		return db.Apply(b, pebble.NoSync)
	}
	s.syncs.Add(1)
	return db.ApplyNoSyncWait(b, pebble.Sync)
}

// batchSizeHint estimates an Op's batch size so the batch is allocated once.
func batchSizeHint(op *Op) int {
	n := 64
	for i := range op.Messages {
		m := &op.Messages[i]
		n += len(m.Record) + 16
	}
	return n
}

// commitLocked advances the assignment state once the batch is in Pebble.
// (An append has already advanced its queues: if its batch fails, the store
// fails and takes no more writes.)
func (s *Store) commitLocked(p *pending) {
	s.nextPhys = p.nextPhys
	s.lastStoreTs = p.lastStoreTs
	if p.dropTopic != "" {
		s.queuesMu.Lock()
		for id := range s.queues {
			if id.Topic == p.dropTopic {
				delete(s.queues, id)
			}
		}
		s.queuesMu.Unlock()
	}
}

// addQueueLocked creates a queue on its first append.
func (s *Store) addQueueLocked(id QueueID) *queue {
	q := &queue{}
	s.queuesMu.Lock()
	s.queues[id] = q
	s.queuesMu.Unlock()
	return q
}

// publish makes a durable batch visible. Batches can finish their sync wait
// out of order, but the WAL is a prefix: once a later batch is durable every
// earlier one is too, so raising each bound to a maximum is safe.
func (s *Store) publish(op *Op, p *pending) {
	s.releaseDerived(p)
	switch op.Kind {
	case OpPutAuth, OpDeleteAuth:
		s.authVersion.Add(1)
	case OpPutGroup, OpDeleteGroup:
		s.groupsVersion.Add(1)
	}
	if op.Kind == OpAppend || op.Kind == OpTruncate {
		// Only an op that wrote the log knows the log durable up to
		// nextPhys: a metadata op's sync covers the other database, not
		// appends still waiting for theirs.
		raise(&s.readablePhys, p.nextPhys)
	}
	s.raiseMins(p)
	if p.newMinPhys >= 0 {
		s.logDeleted(p.newMinPhys)
	}
	for _, n := range p.queueNext {
		if s.queue(n.id.Topic, n.id.ID) != n.q {
			continue // topic deleted meanwhile
		}
		if raise(&n.q.readable, n.off) && s.opts.OnArrival != nil {
			s.opts.OnArrival(n.id.Topic, n.id.ID, n.q.readable.Load())
		}
	}
}

// raiseMins makes a truncation's new minimums visible.
func (s *Store) raiseMins(p *pending) {
	if p.newMinPhys >= 0 {
		raise(&s.minPhys, p.newMinPhys)
	}
	for _, m := range p.queueMin {
		// The queue itself, not one re-created under its id meanwhile.
		if s.queue(m.id.Topic, m.id.ID) == m.q {
			raise(&m.q.min, m.off)
			raise(&m.q.readable, m.off)
		}
	}
}

type int64Atomic interface {
	Load() int64
	CompareAndSwap(old, new int64) bool
}

// raise sets a to v if v is larger; it reports whether a grew.
func raise(a int64Atomic, v int64) bool {
	for {
		cur := a.Load()
		if v <= cur {
			return false
		}
		if a.CompareAndSwap(cur, v) {
			return true
		}
	}
}

// ErrInvalidOp is returned (wrapped) for an Op the store refuses; nothing
// was written.
var ErrInvalidOp = errors.New("store: invalid op")

// RefusedOp reports whether err is the store refusing an op for what the
// op is (ErrInvalidOp, or ErrBadOp for bytes that are no op), not for the
// state of the store: nothing was written, every store refuses the same op
// the same way, and the op's other parts may succeed alone.
func RefusedOp(err error) bool {
	return errors.Is(err, ErrInvalidOp) || errors.Is(err, ErrBadOp)
}

// buildLocked writes op into b and computes its effect, reading only the
// store's state: this is the deterministic core of the apply path.
func (s *Store) buildLocked(b, lb *pebble.Batch, op *Op) (*ApplyResult, *pending, error) {
	p := &pending{nextPhys: s.nextPhys, lastStoreTs: s.lastStoreTs, newMinPhys: -1}
	res := &ApplyResult{}
	switch op.Kind {
	case OpCommitOffset:
		if len(op.Offsets) == 0 {
			return nil, nil, fmt.Errorf("%w: commit of no offsets", ErrInvalidOp)
		}
		for _, c := range op.Offsets {
			if err := checkName("group", c.Group); err != nil {
				return nil, nil, err
			}
			if err := checkName("topic", c.Topic); err != nil {
				return nil, nil, err
			}
			_ = b.Set(meta.OffsetKey(c.Group, c.Topic, c.QueueID), meta.EncodeInt64(c.Offset), nil)
		}
	case OpDeleteGroupOffsets:
		if err := checkName("group", op.Group); err != nil {
			return nil, nil, err
		}
		lo := meta.OffsetGroupPrefix(op.Group)
		_ = b.DeleteRange(lo, prefixEnd(lo), nil)
	case OpPutTopic:
		topicKey := func(c *topicconf.Config) []byte { return meta.TopicKey(c.TopicName) }
		if err := putConfig(b, "topic", op.TopicConfig, topicKey, meta.ValidateTopic, meta.EncodeTopic); err != nil {
			return nil, nil, err
		}
	case OpDeleteTopic:
		if err := checkName("topic", op.Topic); err != nil {
			return nil, nil, err
		}
		// Consumer offsets of the topic go too, or they would come back
		// with a re-created topic (or after a restart) pointing past its
		// new, empty queues; so do the messages in flight from it.
		if err := s.deleteTopicOffsets(b, op.Topic); err != nil {
			return nil, nil, err
		}
		if err := s.deleteTopicInFlight(b, op.Topic); err != nil {
			return nil, nil, err
		}
		// Without a checkpoint, a restart would replay the topic's records
		// since the last one and bring its queues back. It goes first, so
		// that the deletions, later in the batch, also remove the topic's
		// chunks it writes.
		s.checkpointLocked(b, p, s.nextPhys)
		_ = b.Delete(meta.TopicKey(op.Topic), nil)
		lo, hi := consumequeue.TopicBounds(consumequeue.EntryPrefix, op.Topic)
		_ = b.DeleteRange(lo, hi, nil)
		lo, hi = consumequeue.TopicBounds(consumequeue.FloorPrefix, op.Topic)
		_ = b.DeleteRange(lo, hi, nil)
		p.dropTopic = op.Topic
	case OpSetDelayOffset:
		_ = b.Set(meta.DelayKey(op.Level), meta.EncodeInt64(op.Offset), nil)
	case OpPutCheckpoint:
		if op.Name == "" {
			return nil, nil, fmt.Errorf("%w: checkpoint without a name", ErrInvalidOp)
		}
		_ = b.Set(meta.CheckpointKey(op.Name), op.Value, nil)
	case OpPutGroup:
		groupKey := func(c *groupconf.Config) []byte { return meta.GroupKey(c.GroupName) }
		if err := putConfig(b, "group", op.GroupConfig, groupKey, meta.ValidateGroup, meta.EncodeGroup); err != nil {
			return nil, nil, err
		}
	case OpDeleteGroup:
		if err := checkName("group", op.Group); err != nil {
			return nil, nil, err
		}
		_ = b.Delete(meta.GroupKey(op.Group), nil)
	case OpPutAuth:
		if op.Name == "" {
			return nil, nil, fmt.Errorf("%w: auth record without a name", ErrInvalidOp)
		}
		_ = b.Set(meta.AuthKey(op.Name), op.Value, nil)
	case OpDeleteAuth:
		if op.Name == "" {
			return nil, nil, fmt.Errorf("%w: auth record without a name", ErrInvalidOp)
		}
		_ = b.Delete(meta.AuthKey(op.Name), nil)
	case OpTruncate:
		if err := s.buildTruncateLocked(b, lb, op, p); err != nil {
			return nil, nil, err
		}
	case OpInFlight:
		if err := buildInFlight(b, op); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("%w: kind %d", ErrInvalidOp, op.Kind)
	}
	return res, p, nil
}

// checkAppend validates an appended message. Recovery rebuilds queue and
// index entries from the record alone, so the Op's topic, queue id, tag
// hash, keys and unique key must be the record's own: a mismatch would
// give a different store after a crash.
func checkAppend(m *AppendMessage, decoded bool) error {
	if err := checkName("topic", m.Topic); err != nil {
		return err
	}
	if m.QueueID < 0 {
		return fmt.Errorf("%w: queue id %d", ErrInvalidOp, m.QueueID)
	}
	if decoded {
		return nil // DecodeOp read the fields from the record
	}
	ix, n, err := message.IndexStoredRecord(m.Record)
	if err != nil || n != len(m.Record) {
		return fmt.Errorf("%w: record: %v (%d of %d bytes)", ErrInvalidOp, err, n, len(m.Record))
	}
	var topic string
	if rec := appendMessageOf(m.Record, &topic, &ix); rec.Topic != m.Topic || rec.QueueID != m.QueueID ||
		rec.TagsCode != m.TagsCode || rec.UniqKey != m.UniqKey || !slices.Equal(rec.Keys, m.Keys) {
		return fmt.Errorf("%w: the record says %s/%d (tags %q, keys %q, unique key %q), the op %s/%d (tags code %d, keys %q, unique key %q)",
			ErrInvalidOp, rec.Topic, rec.QueueID, ix.Tags, rec.Keys, rec.UniqKey, m.Topic, m.QueueID, m.TagsCode, m.Keys, m.UniqKey)
	}
	return nil
}

// appendMessageOf is the append of the record rec as the record itself
// says, from its index fields ix: what DecodeOp reads and checkAppend
// requires. topic holds the last record's topic, which the next takes when
// it is the same (the records of an append, or of a stretch of the log,
// mostly share one), so they share its string.
func appendMessageOf(rec []byte, topic *string, ix *message.StoredIndex) AppendMessage {
	if string(ix.Topic) != *topic {
		*topic = string(ix.Topic)
	}
	m := AppendMessage{Record: rec, Topic: *topic, QueueID: ix.QueueID,
		TagsCode: message.TagsHashCode(string(ix.Tags)), Keys: strings.Fields(string(ix.Keys))}
	if len(ix.UniqKey) > 0 {
		m.UniqKey = string(ix.UniqKey)
	}
	return m
}

func checkName(what, s string) error {
	if s == "" || len(s) > 255 {
		return fmt.Errorf("%w: %s name %q", ErrInvalidOp, what, s)
	}
	return nil
}

// putConfig adds to b a topic's or group's (what's) config under its key,
// once validate accepts it; none, a refusal or an encoding failure is an
// ErrInvalidOp.
func putConfig[C any](b *pebble.Batch, what string, c *C, key func(*C) []byte, validate func(*C) error, encode func(*C) ([]byte, error)) error {
	if c == nil {
		return fmt.Errorf("%w: no %s config", ErrInvalidOp, what)
	}
	if err := validate(c); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOp, err)
	}
	v, err := encode(c)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOp, err)
	}
	_ = b.Set(key(c), v, nil)
	return nil
}

func prefixEnd(b []byte) []byte {
	e := append([]byte(nil), b...)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] != 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

// deleteTopicOffsets adds to b the deletion of every group's offsets of
// topic. Offsets are keyed group first, so this scans them all; there are
// few (groups x topics x queues).
func (s *Store) deleteTopicOffsets(b *pebble.Batch, topic string) error {
	return s.scan(meta.OffsetBounds, func(k, _ []byte) error {
		_, t, _, err := meta.ParseOffsetKey(k)
		if err == nil && t == topic {
			_ = b.Delete(append([]byte(nil), k...), nil)
		}
		return err
	})
}
