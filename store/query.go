package store

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/commitlog"
	"github.com/runnelmq/runnel/store/consumequeue"
	"github.com/runnelmq/runnel/store/index"
	"github.com/runnelmq/runnel/store/meta"
	"github.com/runnelmq/runnel/topicconf"
)

// The store's reads: records by offset, id and key, queue positions by
// time, and the metadata records. Nothing here writes; the writes are Ops
// through Apply (apply.go, put.go, putmeta.go), and a test keeps it so.

// ErrNotFound is returned when a message, entry or record does not exist
// (or is not yet, or no longer, readable).
var ErrNotFound = errors.New("store: not found")

// ReadRecord returns the stored record at a physical offset.
func (s *Store) ReadRecord(phys int64) ([]byte, error) {
	if err := s.readLock(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	return s.readRecordLocked(phys)
}

func (s *Store) readRecordLocked(phys int64) ([]byte, error) {
	if phys < s.minPhys.Load() || phys >= s.readablePhys.Load() {
		return nil, fmt.Errorf("%w: physical offset %d", ErrNotFound, phys)
	}
	rec, err := commitlog.Read(s.log, phys)
	if errors.Is(err, commitlog.ErrNotFound) {
		return nil, fmt.Errorf("%w: physical offset %d", ErrNotFound, phys)
	}
	return rec, err
}

// LookupMessageID returns the record an offsetMsgId names
// (VIEW_MESSAGE_BY_ID). The id's host is not checked against this store.
func (s *Store) LookupMessageID(offsetMsgID string) ([]byte, error) {
	_, phys, err := message.ParseOffsetMsgID(offsetMsgID)
	if err != nil {
		return nil, err
	}
	return s.ReadRecord(phys)
}

// QueryByKey returns up to maxNum records of topic whose KEYS contain key
// and whose store time is in [begin, end] (ms; end <= 0 means no upper
// bound), oldest first (QUERY_MESSAGE).
func (s *Store) QueryByKey(topic, key string, maxNum int, begin, end int64) ([][]byte, error) {
	return s.query(index.KindKey, topic, key, maxNum, begin, end, 0)
}

// QueryByKeyFrom is QueryByKey over the records at or after physical offset
// from, whatever their store time: a lookup that knows where to start
// reads only the index segments from there on.
func (s *Store) QueryByKeyFrom(topic, key string, maxNum int, from int64) ([][]byte, error) {
	return s.query(index.KindKey, topic, key, maxNum, 0, 0, from)
}

// QueryByUniqKey returns the records of topic whose UNIQ_KEY is uniqKey
// (normally one; a producer retry can store it twice).
func (s *Store) QueryByUniqKey(topic, uniqKey string, maxNum int) ([][]byte, error) {
	return s.query(index.KindUniq, topic, uniqKey, maxNum, 0, 0, 0)
}

// query reads one bucket of every index segment whose store times meet
// [begin, end], and the segments still in memory; each hash match is a
// candidate, kept only if its record really is of topic and has the key.
func (s *Store) query(kind byte, topic, key string, maxNum int, begin, end, from int64) ([][]byte, error) {
	if err := s.readLock(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	if maxNum <= 0 {
		maxNum = 32
	}
	minPhys, readable := max(s.minPhys.Load(), from), s.readablePhys.Load()
	h := index.Hash(kind, topic, key)
	inTime := func(lo, hi int64) bool { return hi >= begin && (end <= 0 || lo <= end) }
	// Memory first: a segment sealed meanwhile is then found in Pebble too
	// (duplicates are dropped below), never in neither.
	var cands []int64
	s.segMu.RLock()
	for _, g := range s.sealed {
		if g.Dir.Entries > 0 && inTime(g.Dir.MinStoreTime, g.Dir.MaxStoreTime) {
			cands = g.AppendMatches(cands, h)
		}
	}
	if g := s.openSeg; g.Dir.Entries > 0 && inTime(g.Dir.MinStoreTime, g.Dir.MaxStoreTime) {
		cands = g.AppendMatches(cands, h)
	}
	s.segMu.RUnlock()
	err := index.Segments(s.db, func(start int64, d index.Dir) (bool, error) {
		if d.End <= minPhys || !inTime(d.MinStoreTime, d.MaxStoreTime) {
			return true, nil
		}
		v, closer, err := s.db.Get(index.BucketKey(start, int(h%index.Buckets)))
		if errors.Is(err, pebble.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		defer closer.Close()
		cands, err = index.AppendMatches(cands, v, h)
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	var out [][]byte
	for _, phys := range cands {
		if len(out) >= maxNum {
			break
		}
		if phys < minPhys || phys >= readable {
			continue
		}
		rec, err := s.readRecordLocked(phys)
		if errors.Is(err, ErrNotFound) {
			continue // deleted by retention meanwhile
		}
		if err != nil {
			return nil, err
		}
		m, _, err := message.DecodeStoredMessage(rec, false)
		if err != nil {
			return nil, fmt.Errorf("store: record at %d: %w", phys, err)
		}
		if m.Topic != topic || m.StoreTimestamp < begin || (end > 0 && m.StoreTimestamp > end) || !hasKey(m, kind, key) {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

func hasKey(m *message.MessageExt, kind byte, key string) bool {
	if kind == index.KindUniq {
		return m.UniqKey() == key
	}
	return slices.Contains(m.Keys(), key)
}

// OffsetByTime returns the first offset of a queue whose message was stored
// at or after ts (ms), the max offset if every message is older, and the
// min offset for an earlier ts (RocketMQ getOffsetInQueueByTime, LOWER).
func (s *Store) OffsetByTime(topic string, queueID int32, ts int64) (int64, error) {
	if err := s.readLock(); err != nil {
		return 0, err
	}
	defer s.closeMu.RUnlock()
	q := s.queue(topic, queueID)
	if q == nil {
		return 0, nil
	}
	max, min := q.readable.Load(), q.min.Load()
	return consumequeue.Search(min, max, s.entryFunc(QueueID{Topic: topic, ID: queueID}),
		func(e consumequeue.Entry) bool { return e.StoreTimestamp >= ts })
}

// QueueEntry returns the consume-queue entry at offset (for store time and
// physical offset of a queue position, e.g. GET_EARLIEST_MSG_STORETIME).
func (s *Store) QueueEntry(topic string, queueID int32, offset int64) (consumequeue.Entry, error) {
	if err := s.readLock(); err != nil {
		return consumequeue.Entry{}, err
	}
	defer s.closeMu.RUnlock()
	q := s.queue(topic, queueID)
	if q == nil || offset < q.min.Load() || offset >= q.readable.Load() {
		return consumequeue.Entry{}, fmt.Errorf("%w: %s/%d offset %d", ErrNotFound, topic, queueID, offset)
	}
	e, ok, err := s.entry(q, topic, queueID, offset)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %s/%d offset %d", ErrNotFound, topic, queueID, offset)
	}
	return e, err
}

// ConsumerOffset reads a committed offset; ok is false if none is stored.
func (s *Store) ConsumerOffset(group, topic string, queueID int32) (offset int64, ok bool, err error) {
	if err := s.readLock(); err != nil {
		return 0, false, err
	}
	defer s.closeMu.RUnlock()
	return meta.GetInt64(s.db, meta.OffsetKey(group, topic, queueID))
}

// RangeConsumerOffsets calls fn for every stored offset, in key order
// (groups by name length, then bytes; likewise topics; then queue), until fn
// returns false.
func (s *Store) RangeConsumerOffsets(fn func(group, topic string, queueID int32, offset int64) bool) error {
	return s.scanRead(meta.OffsetBounds, func(k, v []byte) error {
		g, t, q, err := meta.ParseOffsetKey(k)
		if err != nil {
			return err
		}
		off, err := meta.DecodeInt64(v)
		if err != nil {
			return err
		}
		if !fn(g, t, q, off) {
			return errStopScan
		}
		return nil
	})
}

// Topic reads a topic config.
func (s *Store) Topic(name string) (topicconf.Config, bool, error) {
	if err := s.readLock(); err != nil {
		return topicconf.Config{}, false, err
	}
	defer s.closeMu.RUnlock()
	v, ok, err := meta.GetBytes(s.db, meta.TopicKey(name))
	if err != nil || !ok {
		return topicconf.Config{}, false, err
	}
	c, err := meta.DecodeTopic(v)
	return c, err == nil, err
}

// Topics lists every topic config, by name.
func (s *Store) Topics() ([]topicconf.Config, error) {
	return scanAll(s, meta.TopicBounds, meta.DecodeTopic)
}

// DelayOffsets returns every delay level's progress.
func (s *Store) DelayOffsets() (map[int32]int64, error) {
	out := make(map[int32]int64)
	err := s.scanRead(meta.DelayBounds, func(k, v []byte) error {
		level, err := meta.ParseDelayKey(k)
		if err != nil {
			return err
		}
		out[level], err = meta.DecodeInt64(v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errStopScan ends a scan early, without an error.
var errStopScan = errors.New("store: scan stopped")

// scan calls fn with every key and value of the metadata between the
// bounds, in key order, until fn returns an error (errStopScan ends it
// without one). key and value are only valid during the call.
func (s *Store) scan(bounds func() (lo, hi []byte), fn func(key, value []byte) error) error {
	lo, hi := bounds()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			if errors.Is(err, errStopScan) {
				return nil
			}
			return err
		}
	}
	return it.Error()
}

// scanAll decodes every value between the bounds with decode, in key
// order, under the read lock.
func scanAll[T any](s *Store, bounds func() (lo, hi []byte), decode func([]byte) (T, error)) ([]T, error) {
	var out []T
	err := s.scanRead(bounds, func(_, v []byte) error {
		c, err := decode(v)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanRead is scan under the read lock: ErrClosed once the store is
// closed.
func (s *Store) scanRead(bounds func() (lo, hi []byte), fn func(key, value []byte) error) error {
	if err := s.readLock(); err != nil {
		return err
	}
	defer s.closeMu.RUnlock()
	return s.scan(bounds, fn)
}

// Checkpoint reads a named value.
func (s *Store) Checkpoint(name string) ([]byte, bool, error) {
	if err := s.readLock(); err != nil {
		return nil, false, err
	}
	defer s.closeMu.RUnlock()
	return meta.GetBytes(s.db, meta.CheckpointKey(name))
}
