package store

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
)

// VerifyReport summarises a Verify pass.
type VerifyReport struct {
	Records int64 // log records checked
	Entries int64 // queue entries checked
	// Orphans are records no queue entry points at. Only DeleteTopic
	// creates them legitimately.
	Orphans int64
	// IndexEntries are key and unique-id index entries checked.
	IndexEntries int64
	// StaleIndex are index entries below the log's start: readers skip
	// them; retention deletes them with their segment once the whole
	// segment is below the log's start.
	StaleIndex int64
}

type placeKey struct {
	topic string
	queue int32
	off   int64
}

type placeVal struct {
	phys, ts int64
	size     int32
}

// Verify walks the whole store and checks the invariants crash recovery
// promises: the log is dense from MinPhysOffset to MaxPhysOffset and every
// record decodes with its own offset; every queue is dense over [min, max)
// and each entry points at a record of that topic, queue, offset and size;
// every record is pointed at by its queue (else it counts as an orphan);
// every index entry at or above the log's start points at a record with a
// key (or unique id) of that hash, and every record's keys and unique id
// are indexed. Entries are read where readers read them: chunks and
// segments in Pebble, tails and open segments in memory.
// It reads everything sequentially and holds a map of every record in
// memory, so it is for tests and operators on a quiet store, not the hot
// path.
func (s *Store) Verify() (VerifyReport, error) {
	var rep VerifyReport
	if err := s.readLock(); err != nil {
		return rep, err
	}
	defer s.closeMu.RUnlock()
	minPhys, maxPhys := s.minPhys.Load(), s.readablePhys.Load()
	records, indexed, err := s.verifyLog(&rep, minPhys, maxPhys)
	if err != nil {
		return rep, err
	}
	if err := s.verifyIndex(&rep, indexed, minPhys); err != nil {
		return rep, err
	}
	for id, r := range s.Queues() {
		cur := &entryCursor{s: s, q: s.queue(id.Topic, id.ID), topic: id.Topic, queueID: id.ID, start: -1}
		for off := r.Min; off < r.Max; off++ {
			e, found, err := cur.at(off)
			if err != nil {
				return rep, err
			}
			if !found {
				return rep, fmt.Errorf("store: verify: queue %s/%d: no entry %d (range %v)", id.Topic, id.ID, off, r)
			}
			k := placeKey{id.Topic, id.ID, off}
			v, ok := records[k]
			if !ok || v.phys != e.PhysOffset || v.size != e.Size || v.ts != e.StoreTimestamp {
				return rep, fmt.Errorf("store: verify: queue %s/%d@%d entry %+v has no matching record (found %v: %+v)", id.Topic, id.ID, off, e, ok, v)
			}
			delete(records, k)
			rep.Entries++
		}
	}
	if err := s.verifyChunkKeys(); err != nil {
		return rep, err
	}
	rep.Orphans += int64(len(records))
	return rep, nil
}

// verifyChunkKeys checks that every chunk key belongs to a known queue and
// lies below its end.
func (s *Store) verifyChunkKeys() error {
	queues := s.Queues()
	chunks := func() (lo, hi []byte) { return []byte{consumequeue.EntryPrefix}, []byte{consumequeue.EntryPrefix + 1} }
	return s.scan(chunks, func(key, value []byte) error {
		_, topic, qid, start, err := consumequeue.ParseKey(key)
		if err != nil {
			return err
		}
		r, known := queues[QueueID{Topic: topic, ID: qid}]
		if !known || start >= max(r.Max, 1) {
			return fmt.Errorf("store: verify: chunk %s/%d@%d outside every queue (range %v, known %v)", topic, qid, start, r, known)
		}
		if _, _, err := consumequeue.DecodeChunk(nil, start, value); err != nil {
			return fmt.Errorf("store: verify: chunk %s/%d@%d: %w", topic, qid, start, err)
		}
		return nil
	})
}

// verifyLog checks the log's density and returns where each record claims
// to belong. Two records claiming one place can only follow a topic's
// deletion and re-creation; the older one is an orphan.
// It also returns the index entries the records call for, each with how
// many times it is called for.
func (s *Store) verifyLog(rep *VerifyReport, minPhys, maxPhys int64) (map[placeKey]placeVal, map[index.Entry]int, error) {
	lo, hi := commitlog.Bounds()
	it, err := s.log.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	records := make(map[placeKey]placeVal)
	indexed := make(map[index.Entry]int)
	var hashes []uint32
	expect := int64(-1)
	for ok := it.First(); ok; ok = it.Next() {
		phys, err := commitlog.DecodeKey(it.Key())
		if err != nil {
			return nil, nil, err
		}
		if expect < 0 && phys != minPhys {
			return nil, nil, fmt.Errorf("store: verify: log starts at %d, min is %d", phys, minPhys)
		}
		if expect >= 0 && phys != expect {
			return nil, nil, fmt.Errorf("store: verify: hole in log: record at %d, expected %d", phys, expect)
		}
		rec := it.Value()
		m, n, err := message.DecodeStoredMessage(rec, false)
		if err != nil || n != len(rec) {
			return nil, nil, fmt.Errorf("store: verify: record at %d: %v (%d of %d bytes)", phys, err, n, len(rec))
		}
		if m.CommitLogOffset != phys {
			return nil, nil, fmt.Errorf("store: verify: record at %d says offset %d", phys, m.CommitLogOffset)
		}
		k := placeKey{m.Topic, m.QueueID, m.QueueOffset}
		if _, dup := records[k]; dup {
			rep.Orphans++
		}
		records[k] = placeVal{phys: phys, ts: m.StoreTimestamp, size: int32(len(rec))}
		hashes = recordHashes(hashes[:0], m.Topic, m.Keys(), m.UniqKey())
		for _, h := range hashes {
			indexed[index.Entry{Hash: h, Phys: phys}]++
		}
		expect = phys + int64(len(rec))
		rep.Records++
	}
	if err := it.Error(); err != nil {
		return nil, nil, err
	}
	if expect >= 0 && expect != maxPhys || expect < 0 && minPhys != maxPhys {
		return nil, nil, fmt.Errorf("store: verify: log ends at %d, max is %d (min %d)", expect, maxPhys, minPhys)
	}
	return records, indexed, nil
}

// verifyIndex matches the index, in Pebble and in memory, against want:
// the entries the live records call for, with their multiplicity.
func (s *Store) verifyIndex(rep *VerifyReport, want map[index.Entry]int, minPhys int64) error {
	var got []index.Entry
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{index.BucketPrefix}, UpperBound: []byte{index.BucketPrefix + 1}})
	if err != nil {
		return err
	}
	for ok := it.First(); ok && err == nil; ok = it.Next() {
		got, err = index.DecodeBucket(got, it.Value())
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Sealed segments leave memory when their batch is published, so on a
	// quiet store only the open one is not in Pebble.
	s.segMu.RLock()
	got = s.openSeg.Entries(got)
	s.segMu.RUnlock()
	for _, e := range got {
		if e.Phys < minPhys {
			rep.StaleIndex++
			continue
		}
		if want[e] == 0 {
			return fmt.Errorf("store: verify: index entry %08x -> %d points at no record with a key of that hash", e.Hash, e.Phys)
		}
		want[e]--
		rep.IndexEntries++
	}
	for e, n := range want {
		if n > 0 {
			return fmt.Errorf("store: verify: index entries missing, e.g. %08x -> %d", e.Hash, e.Phys)
		}
	}
	return nil
}
