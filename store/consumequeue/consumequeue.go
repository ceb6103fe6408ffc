// Package consumequeue owns the per-(topic, queue) index of the commit log:
// queue offset -> (physical offset, size, tag hash, store time), assigned
// densely from 0 by the store's apply path.
//
// Entries are stored in chunks of ChunkLen consecutive offsets, one Pebble
// key per chunk, not one per entry: a key per message cost Pebble as much
// as the message itself (memtable, flush, compaction), which made the store
// append at 0.4x of raw Pebble. Keys and values (integers big-endian):
//
//	chunk  'Q' | len(topic) u8 | topic | queueID u32 | chunkStart u64
//	       -> skip u8 | entries, each physOffset u64 | size u32 | tagsCode u64 | storeTimestamp u64 (28 bytes)
//	floor  'q' | len(topic) u8 | topic | queueID u32
//	       -> minOffset u64, written when retention moves the queue's head
//
// chunkStart is a multiple of ChunkLen; entry i of a chunk is offset
// chunkStart + skip + i (skip > 0 only when a queue's first live offset was
// not a chunk boundary, after retention emptied it). A chunk's value only
// grows, except that Open cuts entries pointing past the end of a log a
// crash shortened: the store writes a queue's changed chunks, filled or
// not, only at its checkpoints; in between they live in the store's memory
// and are rebuilt from the commit log after a crash.
//
// Invariants: a queue's live entries are exactly [min, max) with no holes;
// physical offsets and store times never decrease along a queue. After a
// restart min is max(first chunk's first entry, floor) and max is the last
// chunk's end (or the floor), before the store replays the log's tail.
package consumequeue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Key prefixes.
const (
	EntryPrefix = 'Q'
	FloorPrefix = 'q'
)

// EntrySize is the size of an encoded Entry.
const EntrySize = 28

// ChunkLen is the number of offsets one chunk key covers.
const ChunkLen = 64

// ChunkStart is the first offset of the chunk holding off.
func ChunkStart(off int64) int64 { return off &^ (ChunkLen - 1) }

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

// AppendKey appends the key of the chunk holding offset off of a queue.
func AppendKey(dst []byte, topic string, queueID int32, off int64) []byte {
	dst = AppendQueuePrefix(dst, EntryPrefix, topic, queueID)
	return binary.BigEndian.AppendUint64(dst, uint64(ChunkStart(off)))
}

// Key returns the key of the chunk holding offset off of a queue.
func Key(topic string, queueID int32, off int64) []byte {
	return AppendKey(make([]byte, 0, 2+len(topic)+12), topic, queueID, off)
}

// AppendChunk appends the value of a chunk whose entries start at offset
// first. They must all lie in first's chunk.
func AppendChunk(dst []byte, first int64, entries []Entry) []byte {
	dst = append(dst, byte(first-ChunkStart(first)))
	for _, e := range entries {
		dst = e.AppendEncode(dst)
	}
	return dst
}

// DecodeChunk decodes the value of the chunk starting at start: the offset
// of its first entry and the entries, appended to dst.
func DecodeChunk(dst []Entry, start int64, v []byte) (first int64, entries []Entry, err error) {
	skip, n, err := chunkSpan(v)
	if err != nil {
		return 0, nil, err
	}
	dst = slices.Grow(dst, n)
	for p := v[1:]; len(p) > 0; p = p[EntrySize:] {
		e, _ := DecodeEntry(p[:EntrySize])
		dst = append(dst, e)
	}
	return start + int64(skip), dst, nil
}

// ReadChunk reads and decodes the chunk holding off, appending its entries
// to dst; found is false when there is no such chunk.
func ReadChunk(r pebble.Reader, topic string, queueID int32, off int64, dst []Entry) (first int64, entries []Entry, found bool, err error) {
	v, closer, err := r.Get(Key(topic, queueID, off))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, dst, false, nil
	}
	if err != nil {
		return 0, dst, false, err
	}
	defer closer.Close()
	first, entries, err = DecodeChunk(dst, ChunkStart(off), v)
	return first, entries, err == nil, err
}

// chunkSpan checks a chunk value: skip entries before its first, then n.
func chunkSpan(v []byte) (skip, n int, err error) {
	if len(v) < 1 || (len(v)-1)%EntrySize != 0 || int(v[0])+(len(v)-1)/EntrySize > ChunkLen {
		return 0, 0, fmt.Errorf("consumequeue: chunk of %d bytes", len(v))
	}
	return int(v[0]), (len(v) - 1) / EntrySize, nil
}

// chunkEntry decodes the entry at off from the value of the chunk at start.
func chunkEntry(v []byte, start, off int64) (Entry, bool, error) {
	skip, n, err := chunkSpan(v)
	if err != nil {
		return Entry{}, false, err
	}
	i := off - start - int64(skip)
	if i < 0 || i >= int64(n) {
		return Entry{}, false, nil
	}
	e, err := DecodeEntry(v[1+i*EntrySize : 1+(i+1)*EntrySize])
	return e, err == nil, err
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

// ParseKey splits a chunk or floor key; off is the chunk's start.
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
	return chunkEntry(v, ChunkStart(off), off)
}

// LastChunk returns the entries of a queue's chunk holding offset off-1,
// when it does not end at a chunk boundary: the unfilled chunk the store
// keeps in memory. first is the offset of entries[0].
func LastChunk(r pebble.Reader, topic string, queueID int32, off int64) (first int64, entries []Entry, err error) {
	if off <= 0 || off%ChunkLen == 0 {
		return off, nil, nil
	}
	first, entries, found, err := ReadChunk(r, topic, queueID, off-1, nil)
	if !found && err == nil {
		return off, nil, nil
	}
	if err != nil || first+int64(len(entries)) != off {
		return 0, nil, fmt.Errorf("consumequeue: %s/%d: last chunk %d ends at %d, not %d (%v)", topic, queueID, ChunkStart(off-1), first+int64(len(entries)), off, err)
	}
	return first, entries, nil
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
		topic, qid, start, skip, _, err := chunkAt(it)
		if err != nil {
			return nil, err
		}
		first := start + int64(skip)
		_, upper := QueueBounds(topic, qid)
		// Last chunk of this queue: the key before the next queue's prefix.
		if !it.SeekLT(upper) {
			return nil, fmt.Errorf("consumequeue: queue %s/%d vanished during scan", topic, qid)
		}
		_, _, lastStart, skip, n, err := chunkAt(it)
		if err != nil {
			return nil, err
		}
		q := QueueID{topic, qid}
		r := Range{Min: first, Max: lastStart + int64(skip+n)}
		if f, ok := floors[q]; ok {
			// Retention keeps the chunk holding the new minimum, entries
			// below it included; the floor says where the queue starts.
			r.Min = max(r.Min, f)
			r.Max = max(r.Max, f)
		}
		out[q] = r
		ok = it.SeekGE(upper)
	}
	return out, it.Error()
}

// chunkAt reads the chunk under it: its queue, its first offset, and the
// entries it holds past skip (n of them).
func chunkAt(it *pebble.Iterator) (topic string, qid int32, start int64, skip, n int, err error) {
	if _, topic, qid, start, err = ParseKey(it.Key()); err != nil {
		return "", 0, 0, 0, 0, err
	}
	if skip, n, err = chunkSpan(it.Value()); err != nil {
		err = fmt.Errorf("%w (%s/%d, chunk %d)", err, topic, qid, start)
	}
	return topic, qid, start, skip, n, err
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

// EntryFunc reads the entry at an offset (found false: not there).
type EntryFunc func(off int64) (e Entry, found bool, err error)

// Search returns the first offset in [min, max) whose entry satisfies
// atOrPast, or max if none does. atOrPast must be monotone along the queue,
// as physical offsets and store times are. An entry get cannot find (deleted
// meanwhile by retention) counts as below the answer.
func Search(min, max int64, get EntryFunc, atOrPast func(Entry) bool) (int64, error) {
	lo, hi := min, max
	for lo < hi {
		mid := lo + (hi-lo)/2
		e, ok, err := get(mid)
		if err != nil {
			return 0, err
		}
		if !ok {
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

// SearchPhys returns the first offset in [min, max) whose record lies at or
// past physical offset phys, or max if none does.
func SearchPhys(min, max int64, get EntryFunc, phys int64) (int64, error) {
	return Search(min, max, get, func(e Entry) bool { return e.PhysOffset >= phys })
}
