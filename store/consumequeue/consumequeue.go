// Package consumequeue owns the per-(topic, queue) index of the commit log:
// queue offset -> (physical offset, size, tag hash, store time), assigned
// densely from 0 by the store's apply path.
//
// Keys and values in the store's Pebble key space:
//
//	entry  'Q' | len(topic) u8 | topic | queueID u32 | queueOffset u64
//	       -> physOffset u64 | size u32 | tagsCode u64 | storeTimestamp u64   (28 bytes)
//	floor  'q' | len(topic) u8 | topic | queueID u32
//	       -> minOffset u64, written when retention empties the queue's head
//
// All integers are big-endian, so one queue's entries are contiguous and in
// offset order. RocketMQ's 20-byte unit (offset, size, tag hash) gains the
// store time here so that a timestamp search reads only the queue.
//
// Invariants: a queue's live entries are exactly [min, max) with no holes;
// physical offsets and store times never decrease along a queue; the entry
// for offset k is written in the same Pebble batch as the record it points
// at, and deleted in the same batch as it. After a restart min is the first
// live entry (or the floor key when the queue is empty) and max is the last
// entry + 1.
package consumequeue

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Key prefixes.
const (
	EntryPrefix = 'Q'
	FloorPrefix = 'q'
)

// EntrySize is the size of an encoded Entry.
const EntrySize = 28

// Entry is one consume-queue unit.
type Entry struct {
	PhysOffset     int64
	Size           int32
	TagsCode       int64
	StoreTimestamp int64
}

// AppendEncode appends e's value encoding to dst.
func (e Entry) AppendEncode(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.PhysOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.Size))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.TagsCode))
	return binary.BigEndian.AppendUint64(dst, uint64(e.StoreTimestamp))
}

// DecodeEntry decodes an entry value.
func DecodeEntry(v []byte) (Entry, error) {
	if len(v) != EntrySize {
		return Entry{}, fmt.Errorf("consumequeue: entry of %d bytes", len(v))
	}
	return Entry{
		PhysOffset:     int64(binary.BigEndian.Uint64(v)),
		Size:           int32(binary.BigEndian.Uint32(v[8:])),
		TagsCode:       int64(binary.BigEndian.Uint64(v[12:])),
		StoreTimestamp: int64(binary.BigEndian.Uint64(v[20:])),
	}, nil
}

// AppendQueuePrefix appends the prefix shared by every entry of one queue.
func AppendQueuePrefix(dst []byte, prefix byte, topic string, queueID int32) []byte {
	dst = append(dst, prefix, byte(len(topic)))
	dst = append(dst, topic...)
	return binary.BigEndian.AppendUint32(dst, uint32(queueID))
}

// AppendKey appends the key of entry off of a queue.
func AppendKey(dst []byte, topic string, queueID int32, off int64) []byte {
	dst = AppendQueuePrefix(dst, EntryPrefix, topic, queueID)
	return binary.BigEndian.AppendUint64(dst, uint64(off))
}

// Key returns the key of entry off of a queue.
func Key(topic string, queueID int32, off int64) []byte {
	return AppendKey(make([]byte, 0, 2+len(topic)+12), topic, queueID, off)
}

// FloorKey returns the key holding a queue's min offset after retention.
func FloorKey(topic string, queueID int32) []byte {
	return AppendQueuePrefix(nil, FloorPrefix, topic, queueID)
}

// QueueBounds are iterator bounds covering every entry of a queue.
func QueueBounds(topic string, queueID int32) (lower, upper []byte) {
	lower = AppendQueuePrefix(nil, EntryPrefix, topic, queueID)
	upper = AppendQueuePrefix(nil, EntryPrefix, topic, queueID+1)
	if queueID == -1 || queueID == 1<<31-1 {
		upper = successor(lower)
	}
	return lower, upper
}

// TopicBounds cover every entry (prefix 'Q') or floor ('q') of a topic.
func TopicBounds(prefix byte, topic string) (lower, upper []byte) {
	lower = append([]byte{prefix, byte(len(topic))}, topic...)
	return lower, successor(lower)
}

func successor(b []byte) []byte {
	s := append([]byte(nil), b...)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// ParseKey splits an entry or floor key.
func ParseKey(k []byte) (prefix byte, topic string, queueID int32, off int64, err error) {
	if len(k) < 2 {
		return 0, "", 0, 0, fmt.Errorf("consumequeue: bad key %x", k)
	}
	n := int(k[1])
	rest := k[2:]
	if len(rest) < n+4 {
		return 0, "", 0, 0, fmt.Errorf("consumequeue: bad key %x", k)
	}
	topic = string(rest[:n])
	queueID = int32(binary.BigEndian.Uint32(rest[n:]))
	rest = rest[n+4:]
	switch {
	case k[0] == EntryPrefix && len(rest) == 8:
		off = int64(binary.BigEndian.Uint64(rest))
	case k[0] == FloorPrefix && len(rest) == 0:
	default:
		return 0, "", 0, 0, fmt.Errorf("consumequeue: bad key %x", k)
	}
	return k[0], topic, queueID, off, nil
}

// Get reads the entry at off.
func Get(r pebble.Reader, topic string, queueID int32, off int64) (Entry, bool, error) {
	v, closer, err := r.Get(Key(topic, queueID, off))
	if errors.Is(err, pebble.ErrNotFound) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	defer closer.Close()
	e, err := DecodeEntry(v)
	return e, err == nil, err
}

// QueueID identifies a queue.
type QueueID struct {
	Topic string
	ID    int32
}

// Range is a queue's live offsets [Min, Max).
type Range struct{ Min, Max int64 }

// Scan finds every queue in r and its live range, in key order. It costs a
// few seeks per queue, not a pass over the entries, which is what keeps
// reopening a large store fast.
func Scan(r pebble.Reader) (map[QueueID]Range, error) {
	out := make(map[QueueID]Range)
	floors, err := scanFloors(r)
	if err != nil {
		return nil, err
	}
	for q, min := range floors {
		out[q] = Range{Min: min, Max: min}
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{EntryPrefix}, UpperBound: []byte{EntryPrefix + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; {
		_, topic, qid, first, err := ParseKey(it.Key())
		if err != nil {
			return nil, err
		}
		_, upper := QueueBounds(topic, qid)
		// Last entry of this queue: the key before the next queue's prefix.
		if !it.SeekLT(upper) {
			return nil, fmt.Errorf("consumequeue: queue %s/%d vanished during scan", topic, qid)
		}
		_, _, _, last, err := ParseKey(it.Key())
		if err != nil {
			return nil, err
		}
		q := QueueID{topic, qid}
		out[q] = Range{Min: first, Max: last + 1}
		ok = it.SeekGE(upper)
	}
	return out, it.Error()
}

func scanFloors(r pebble.Reader) (map[QueueID]int64, error) {
	out := make(map[QueueID]int64)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{FloorPrefix}, UpperBound: []byte{FloorPrefix + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		_, topic, qid, _, err := ParseKey(it.Key())
		if err != nil {
			return nil, err
		}
		v := it.Value()
		if len(v) != 8 {
			return nil, fmt.Errorf("consumequeue: floor of %d bytes", len(v))
		}
		out[QueueID{topic, qid}] = int64(binary.BigEndian.Uint64(v))
	}
	return out, it.Error()
}

// SearchTime returns the first offset in [min, max) whose entry's store time
// is >= ts, or max if none is.
func SearchTime(r pebble.Reader, topic string, queueID int32, min, max, ts int64) (int64, error) {
	return search(r, topic, queueID, min, max, func(e Entry) bool { return e.StoreTimestamp >= ts })
}

// SearchPhys returns the first offset in [min, max) whose entry points at or
// after phys, or max if none does. Retention uses it to find a queue's new
// minimum.
func SearchPhys(r pebble.Reader, topic string, queueID int32, min, max, phys int64) (int64, error) {
	return search(r, topic, queueID, min, max, func(e Entry) bool { return e.PhysOffset >= phys })
}

// search returns the first offset in [min, max) whose entry satisfies atOrPast,
// or max if none does. atOrPast must be monotone along the queue, as physical
// offsets and store times are.
func search(r pebble.Reader, topic string, queueID int32, min, max int64, atOrPast func(Entry) bool) (int64, error) {
	lo, hi := min, max
	for lo < hi {
		mid := lo + (hi-lo)/2
		e, ok, err := Get(r, topic, queueID, mid)
		if err != nil {
			return 0, err
		}
		if !ok { // deleted under us by retention: search above it
			lo = mid + 1
			continue
		}
		if atOrPast(e) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}
