package store

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/remoting/protocol"
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
	// them, retention deletes them with their records, so only a store
	// written by an older version has any.
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
// every index entry at or above the log's start points at a record with
// that topic, key (or unique id) and store time, and every record's keys
// and unique id are indexed.
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
	queues := s.Queues()
	next := make(map[QueueID]int64, len(queues))
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{consumequeue.EntryPrefix}, UpperBound: []byte{consumequeue.EntryPrefix + 1}})
	if err != nil {
		return rep, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		_, topic, qid, off, err := consumequeue.ParseKey(it.Key())
		if err != nil {
			return rep, err
		}
		id := QueueID{Topic: topic, ID: qid}
		r, known := queues[id]
		if !known {
			return rep, fmt.Errorf("store: verify: entry %s/%d@%d of an unknown queue", topic, qid, off)
		}
		want, seen := next[id]
		if !seen {
			want = r.Min
		}
		if off != want {
			return rep, fmt.Errorf("store: verify: queue %s/%d: entry %d, expected %d (range %v)", topic, qid, off, want, r)
		}
		next[id] = off + 1
		e, err := consumequeue.DecodeEntry(it.Value())
		if err != nil {
			return rep, err
		}
		k := placeKey{topic, qid, off}
		v, ok := records[k]
		if !ok || v.phys != e.PhysOffset || v.size != e.Size || v.ts != e.StoreTimestamp {
			return rep, fmt.Errorf("store: verify: queue %s/%d@%d entry %+v has no matching record (found %v: %+v)", topic, qid, off, e, ok, v)
		}
		delete(records, k)
		rep.Entries++
	}
	if err := it.Error(); err != nil {
		return rep, err
	}
	for id, r := range queues {
		got, seen := next[id]
		if !seen {
			got = r.Min
		}
		if got != r.Max {
			return rep, fmt.Errorf("store: verify: queue %s/%d ends at %d, max is %d", id.Topic, id.ID, got, r.Max)
		}
	}
	rep.Orphans += int64(len(records))
	return rep, nil
}

// verifyLog checks the log's density and returns where each record claims
// to belong. Two records claiming one place can only follow a topic's
// deletion and re-creation; the older one is an orphan.
// It also returns the index entries the records call for, with their
// store times.
func (s *Store) verifyLog(rep *VerifyReport, minPhys, maxPhys int64) (map[placeKey]placeVal, map[string]int64, error) {
	lo, hi := commitlog.Bounds()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	records := make(map[placeKey]placeVal)
	indexed := make(map[string]int64)
	var keys [][]byte
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
		m, n, err := protocol.DecodeStoredMessage(rec, false)
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
		keys = recordIndexKeys(keys[:0], m, phys)
		for _, k := range keys {
			indexed[string(k)] = m.StoreTimestamp
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

// verifyIndex matches the key and unique-id index against want, the
// entries the live records call for.
func (s *Store) verifyIndex(rep *VerifyReport, want map[string]int64, minPhys int64) error {
	for _, kind := range []byte{index.KindKey, index.KindUniq} {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kind}, UpperBound: []byte{kind + 1}})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			phys, err := index.PhysOf(it.Key())
			if err != nil {
				_ = it.Close()
				return err
			}
			if phys < minPhys {
				rep.StaleIndex++
				continue
			}
			ts, err := index.DecodeValue(it.Value())
			wantTs, found := want[string(it.Key())]
			if err != nil || !found || ts != wantTs {
				_ = it.Close()
				return fmt.Errorf("store: verify: index entry %q -> %d points at no record with that key and store time %d (%v)", it.Key(), ts, wantTs, err)
			}
			delete(want, string(it.Key()))
			rep.IndexEntries++
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	for k := range want {
		return fmt.Errorf("store: verify: %d index entries missing, e.g. %q", len(want), k)
	}
	return nil
}
