package store

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
	"github.com/runnelmq/runnel/store/meta"
)

// Derived data: consume-queue entries and index entries are functions of
// the log. They are written in bulk, only by checkpoints: a checkpoint
// writes every chunk of ChunkLen queue entries that changed since the last
// one (filled or not) and seals the open index segment, and records
// derivedKey = the log position up to which Pebble holds all derived data.
// Between checkpoints they live in memory: each queue's tail and the open
// index segment, together about CheckpointBytes of log's worth. So an
// append writes its records, in the log's database, and nothing else
// unless it is the one that checkpoints. A checkpoint happens inside an
// Op's batch, decided by the Op sequence alone (every CheckpointBytes of
// log, and in every truncation or topic deletion), so replicas stay
// byte-identical; an append waits for its checkpoint to be durable too.
// After a crash, Open replays the log from derivedKey to rebuild the
// memory (recoverDerived).
//
// Memory and Pebble hand over without a gap: a queue's tail drops its
// filled chunks, and the store a sealed segment, only in publish, after the
// batch that wrote them is in Pebble; readers look in memory first. A tail
// starts at a chunk boundary (or where its queue starts), so that writing
// it rewrites whole chunks.

// derivedKey holds the log position up to which derived data is in Pebble.
var derivedKey = meta.StateKey("derived")

// dirtyQueue is a queue with entries appended since the last checkpoint.
type dirtyQueue struct {
	id QueueID
	q  *queue
}

// chunkDone says that the batch of an op wrote q's chunks below end.
type chunkDone struct {
	q   *queue
	end int64
}

// appendEntryLocked adds entry off to q's tail (applyMu held).
func (s *Store) appendEntryLocked(id QueueID, q *queue, off int64, e consumequeue.Entry) {
	q.mu.Lock()
	if len(q.tail) == 0 {
		q.tailStart = off
	}
	q.tail = append(q.tail, e)
	q.mu.Unlock()
	if !q.dirty {
		q.dirty = true
		s.dirty = append(s.dirty, dirtyQueue{id, q})
	}
}

// writeTailLocked writes into b the chunks q's tail holds, the last one
// perhaps unfilled, and notes in p which filled ones publish may drop.
func (s *Store) writeTailLocked(b *pebble.Batch, p *pending, id QueueID, q *queue) {
	q.mu.RLock() // publish may trim the tail meanwhile
	defer q.mu.RUnlock()
	end := q.tailStart + int64(len(q.tail))
	// From the queue's minimum at the lowest: a truncation not yet
	// published has raised it (under applyMu) and deleted the chunks
	// wholly below it, which the tail still holds.
	for start := consumequeue.ChunkStart(max(q.tailStart, q.min.Load())); start < end; start += consumequeue.ChunkLen {
		lo, hi := max(start, q.tailStart), min(start+consumequeue.ChunkLen, end)
		s.chunkBuf = consumequeue.AppendChunk(s.chunkBuf[:0], lo, q.tail[lo-q.tailStart:hi-q.tailStart])
		_ = b.Set(consumequeue.Key(id.Topic, id.ID, start), s.chunkBuf, nil)
	}
	if filled := consumequeue.ChunkStart(end); filled > q.tailStart {
		p.chunks = append(p.chunks, chunkDone{q, filled})
	}
}

// checkpointDue reports whether an append ending at end must checkpoint.
func (s *Store) checkpointDue(end int64) bool {
	return end-s.derivedPhys >= s.opts.CheckpointBytes
}

// checkpointLocked writes into b every queue's unwritten entries and the
// open index segment, and records that Pebble holds all derived data below
// end. An op that also deletes derived data (a truncation, a topic
// deletion) checkpoints first, so that its deletions, later in the batch,
// win over what the checkpoint writes.
func (s *Store) checkpointLocked(b *pebble.Batch, p *pending, end int64) {
	for _, d := range s.dirty {
		d.q.dirty = false
		s.writeTailLocked(b, p, d.id, d.q)
	}
	s.dirty = s.dirty[:0]
	s.segMu.Lock()
	if g := s.openSeg; g.Dir.Entries > 0 {
		g.Seal(end, func(k, v []byte) { _ = b.Set(k, v, nil) })
		s.sealed = append(s.sealed, g)
		p.sealed = g
	}
	s.openSeg = index.NewSegment(end)
	s.segMu.Unlock()
	_ = b.Set(derivedKey, meta.EncodeInt64(end), nil)
	s.derivedPhys = end
}

// releaseDerived drops from memory what p's batch wrote, now that it is
// readable in Pebble.
func (s *Store) releaseDerived(p *pending) {
	for _, c := range p.chunks {
		c.q.mu.Lock()
		if n := c.end - c.q.tailStart; n > 0 {
			n = min(n, int64(len(c.q.tail)))
			// The rest (an unfilled chunk, and what came since) moves to
			// the front, so a busy queue's tail keeps its array for the
			// next interval; a tail whose queue has gone quiet lets go of
			// an array far bigger than what it held this time.
			if rest := c.q.tail[n:]; cap(c.q.tail) <= 2*int(n)+consumequeue.ChunkLen {
				c.q.tail = c.q.tail[:copy(c.q.tail, rest)]
			} else {
				c.q.tail = append([]consumequeue.Entry(nil), rest...) // nil when empty: no pointer into the old array
			}
			c.q.tailStart += n
		}
		c.q.mu.Unlock()
	}
	if p.sealed != nil {
		s.segMu.Lock()
		s.sealed = slices.DeleteFunc(s.sealed, func(g *index.Segment) bool { return g == p.sealed })
		s.segMu.Unlock()
	}
}

// entry returns entry off of a queue: from the queue's tail in memory, or
// from its chunk in Pebble. q may be nil (the queue is not known).
func (s *Store) entry(q *queue, topic string, queueID int32, off int64) (consumequeue.Entry, bool, error) {
	if e, ok := q.tailEntry(off); ok {
		return e, true, nil
	}
	return consumequeue.Get(s.db, topic, queueID, off)
}

// tailEntry returns entry off if q's tail in memory holds it (q may be nil).
func (q *queue) tailEntry(off int64) (consumequeue.Entry, bool) {
	if q == nil {
		return consumequeue.Entry{}, false
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	if i := off - q.tailStart; i >= 0 && i < int64(len(q.tail)) {
		return q.tail[i], true
	}
	return consumequeue.Entry{}, false
}

func (q *queue) loadChunk() *readChunk {
	if q == nil {
		return nil
	}
	return q.chunk.Load()
}

// entryFunc adapts entry for consumequeue.Search.
func (s *Store) entryFunc(id QueueID) consumequeue.EntryFunc {
	q := s.queue(id.Topic, id.ID)
	return func(off int64) (consumequeue.Entry, bool, error) { return s.entry(q, id.Topic, id.ID, off) }
}

// entryCursor reads consecutive entries of one queue, decoding each chunk
// once.
type entryCursor struct {
	s       *Store
	q       *queue
	topic   string
	queueID int32
	start   int64 // chunk held in entries, or -1
	first   int64
	entries []consumequeue.Entry
}

func (c *entryCursor) at(off int64) (consumequeue.Entry, bool, error) {
	if e, ok := c.q.tailEntry(off); ok {
		return e, true, nil
	}
	if start := consumequeue.ChunkStart(off); start != c.start {
		c.start = -1
		// A pull of 32 usually ends inside the chunk of 64 the previous
		// pull of the queue read (after the first Get of a chunk the
		// hint serves only a consumer whose records are adjacent in
		// the log), so the last chunk read stays decoded in the queue:
		// one Pebble Get per chunk of the queue instead of one per
		// pull. A chunk's entries never change once written (a
		// checkpoint rewrites a chunk only with more entries after
		// them), and retention raises the queue's minimum before it
		// deletes a chunk, so an entry at or above the minimum is still
		// there.
		if rc := c.q.loadChunk(); rc != nil && rc.start == start && off >= rc.first && off-rc.first < int64(len(rc.entries)) && off >= c.q.min.Load() {
			c.start, c.first, c.entries = rc.start, rc.first, rc.entries
		} else {
			// The entries are published in q.chunk, so never decoded
			// into a slice another cursor may hold.
			first, entries, found, err := consumequeue.ReadChunk(c.s.db, c.topic, c.queueID, off, nil)
			if !found || err != nil {
				return consumequeue.Entry{}, false, err
			}
			c.s.chunkReads.Add(1)
			c.start, c.first, c.entries = start, first, entries
			if c.q != nil {
				c.q.chunk.Store(&readChunk{start: start, first: first, entries: entries})
			}
		}
	}
	if i := off - c.first; i >= 0 && i < int64(len(c.entries)) {
		return c.entries[i], true, nil
	}
	return consumequeue.Entry{}, false, nil
}

// clampDerived removes what the database beside the log says about records
// at or past end, the log's end after a crash: the two databases' WALs can
// keep different amounts of the last writes. Index segments reaching past
// end are dropped (replay rebuilds them), queue entries pointing past end
// are cut, and the derived position is moved back accordingly.
func (s *Store) clampDerived(end int64) error {
	b := s.db.NewBatch()
	defer b.Close()
	replayFrom := end
	err := index.Segments(s.db, func(start int64, d index.Dir) (bool, error) {
		if d.End > end {
			replayFrom = min(replayFrom, start)
			index.DeleteSegments(b, start, start+1)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	ranges, err := consumequeue.Scan(s.db)
	if err != nil {
		return err
	}
	for id, r := range ranges {
		get := func(off int64) (consumequeue.Entry, bool, error) { return consumequeue.Get(s.db, id.Topic, id.ID, off) }
		cut, err := consumequeue.SearchPhys(r.Min, r.Max, get, end)
		if err != nil {
			return err
		}
		if cut >= r.Max {
			continue
		}
		// Entries grow along the queue: everything from cut on is past end.
		start := consumequeue.ChunkStart(cut)
		_, hi := consumequeue.QueueBounds(id.Topic, id.ID)
		_ = b.DeleteRange(consumequeue.Key(id.Topic, id.ID, start), hi, nil)
		first, es, found, err := consumequeue.ReadChunk(s.db, id.Topic, id.ID, cut, nil)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("store: queue %s/%d: no chunk holds %d, which Search read", id.Topic, id.ID, cut)
		}
		if keep := cut - first; keep > 0 {
			_ = b.Set(consumequeue.Key(id.Topic, id.ID, start), consumequeue.AppendChunk(nil, first, es[:keep]), nil)
		}
	}
	if d, ok, err := meta.GetInt64(s.db, derivedKey); err != nil {
		return err
	} else if ok && d > replayFrom {
		_ = b.Set(derivedKey, meta.EncodeInt64(replayFrom), nil)
	}
	if b.Empty() {
		return nil
	}
	return s.commitSync(s.db, b)
}

// recoverDerived loads each queue's unfilled last chunk into its tail and
// replays the log from the last checkpoint, rebuilding what was only in
// memory when the store stopped; if it found any, it checkpoints at once
// (unless the store was restored from a snapshot).
func (s *Store) recoverDerived() error {
	d, _, err := meta.GetInt64(s.db, derivedKey)
	if err != nil {
		return err
	}
	for id, q := range s.queues {
		first, tail, err := consumequeue.LastChunk(s.db, id.Topic, id.ID, q.next)
		if err != nil {
			return err
		}
		q.tailStart, q.tail = first, tail
	}
	from := max(d, s.minPhys.Load())
	s.derivedPhys = from
	s.openSeg = index.NewSegment(from)
	if from >= s.nextPhys {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	p := &pending{}
	it, err := s.log.NewIter(&pebble.IterOptions{LowerBound: commitlog.Key(from), UpperBound: commitlog.Key(s.nextPhys)})
	if err != nil {
		return err
	}
	defer it.Close()
	var hashes []uint32
	var topic string
	for ok := it.First(); ok; ok = it.Next() {
		phys, err := commitlog.DecodeKey(it.Key())
		if err != nil {
			return err
		}
		ix, _, err := message.IndexStoredRecord(it.Value())
		if err != nil {
			return fmt.Errorf("record at %d: %w", phys, err)
		}
		m := appendMessageOf(nil, &topic, &ix)
		id := QueueID{Topic: m.Topic, ID: m.QueueID}
		q := s.queues[id]
		if q == nil {
			q = &queue{}
			s.queues[id] = q
		}
		switch {
		case ix.QueueOffset < q.next:
			// Its entry is in a chunk written after the checkpoint.
		case ix.QueueOffset == q.next:
			e := consumequeue.Entry{PhysOffset: phys, Size: int32(len(it.Value())),
				TagsCode: m.TagsCode, StoreTimestamp: ix.StoreTimestamp}
			s.appendEntryLocked(id, q, q.next, e)
			q.next++
		default:
			return fmt.Errorf("record at %d is %s/%d@%d, but the queue ends at %d", phys, id.Topic, id.ID, ix.QueueOffset, q.next)
		}
		hashes = recordHashes(hashes[:0], m.Topic, m.Keys, m.UniqKey)
		for _, h := range hashes {
			s.openSeg.Add(h, phys, ix.StoreTimestamp)
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if s.restored {
		// A restored snapshot is not a crash: nothing needs bounding, and
		// not checkpointing here keeps the store checkpointing where the
		// snapshotted one does, so the same further ops leave both
		// byte-identical.
		for _, q := range s.queues {
			q.readable.Store(q.next)
		}
		return nil
	}
	s.checkpointLocked(b, p, s.nextPhys)
	if err := s.commitSync(s.db, b); err != nil {
		return err
	}
	s.releaseDerived(p)
	for _, q := range s.queues {
		q.readable.Store(q.next)
	}
	return nil
}

// recordHashes appends the index hashes of a message: one per indexable
// KEYS word and one for its UNIQ_KEY.
func recordHashes(dst []uint32, topic string, keys []string, uniq string) []uint32 {
	for _, k := range keys {
		if index.Indexable(k) {
			dst = append(dst, index.Hash(index.KindKey, topic, k))
		}
	}
	if index.Indexable(uniq) {
		dst = append(dst, index.Hash(index.KindUniq, topic, uniq))
	}
	return dst
}
