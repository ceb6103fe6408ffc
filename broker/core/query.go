package core

import (
	"encoding/binary"
	"errors"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// maxQueryNum caps the messages a key query returns (Java
// defaultQueryMaxNum).
const maxQueryNum = 32

// ViewMessage returns the stored record at a commit log offset (the tools
// decode the offset from an offsetMsgId).
func (c *Core) ViewMessage(offset int64) ([]byte, error) {
	rec, err := c.store().ReadRecord(offset)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(NoMessage, "can not find message by the offset, %d", offset)
	}
	if err != nil {
		return nil, errorf(Internal, "read message at %d: %v", offset, err)
	}
	return rec, nil
}

// MessageQuery looks messages of a topic up by key.
type MessageQuery struct {
	Topic, Key string
	// MaxNum caps the answer (0 or above maxQueryNum: maxQueryNum).
	MaxNum int
	// Begin and End bound the store time (ms; End <= 0: no upper bound).
	Begin, End int64
	// Unique: Key is a UNIQ_KEY, not a KEYS word.
	Unique bool
}

// QueryResult is what a key query found.
type QueryResult struct {
	Records [][]byte
	// IndexLastUpdateTimestamp and IndexLastUpdatePhyoffset say how far the
	// index reached when it was read.
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

// QueryMessage finds messages by key within a store-time window, or by
// UNIQ_KEY. Nothing found is QUERY_NOT_FOUND, as Java.
func (c *Core) QueryMessage(q MessageQuery) (QueryResult, error) {
	n := q.MaxNum
	if n <= 0 || n > maxQueryNum {
		n = maxQueryNum
	}
	var recs [][]byte
	var err error
	if q.Unique {
		// The store's unique-key index takes no time range, but Java applies
		// the request's range to both kinds of query; the range is applied
		// here, to every copy, before the cap (a key has one or two copies).
		recs, err = c.store().QueryByUniqKey(q.Topic, q.Key, maxQueryNum)
		recs = storedWithin(recs, q.Begin, q.End, n)
	} else {
		recs, err = c.store().QueryByKey(q.Topic, q.Key, n, q.Begin, q.End)
	}
	if err != nil {
		return QueryResult{}, errorf(Internal, "query %s by key %q: %v", q.Topic, q.Key, err)
	}
	if len(recs) == 0 {
		return QueryResult{}, refuse(NotFound, "can not find message, maybe time range not correct")
	}
	return QueryResult{
		Records:                  recs,
		IndexLastUpdateTimestamp: c.cfg.Now().UnixMilli(),
		IndexLastUpdatePhyoffset: c.store().MaxPhysOffset(),
	}, nil
}

// storedWithin keeps, of records oldest first, at most n whose store time
// is within [begin, end] (ms; end <= 0 is no upper bound, as the store's
// key query takes it).
func storedWithin(recs [][]byte, begin, end int64, n int) [][]byte {
	out := recs[:0]
	for _, r := range recs {
		ts, ok := recordStoreTime(r)
		if !ok || ts < begin || (end > 0 && ts > end) {
			continue
		}
		if out = append(out, r); len(out) == n {
			break
		}
	}
	return out
}

// recordStoreTime reads the store timestamp of an encoded record; false
// when the record is too short to hold one.
func recordStoreTime(rec []byte) (int64, bool) {
	if len(rec) < message.StoredSysFlagPos+4 {
		return 0, false
	}
	pos := message.StoreTimestampPos(int32(binary.BigEndian.Uint32(rec[message.StoredSysFlagPos:])))
	if len(rec) < pos+8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(rec[pos:])), true
}
