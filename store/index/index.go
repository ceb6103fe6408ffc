// Package index owns the message-key index: lookups by the KEYS property
// (QUERY_MESSAGE) and by the client's unique id UNIQ_KEY
// (VIEW_MESSAGE_BY_ID, QUERY_MESSAGE with the unique-key flag).
//
// Like RocketMQ's IndexFile it is a hash index over a stretch of the commit
// log, not a key per message: a key per message cost Pebble as much as the
// message itself. The log is cut into segments; a segment's entries,
// (hash of kind, topic and key; physical offset), are gathered in memory
// while the segment is open and written when it is sealed, bucketed by
// hash. Keys and values (integers big-endian):
//
//	segment  'x' | start u64 -> end u64 | minStoreTime u64 | maxStoreTime u64 | entries u32
//	bucket   'X' | start u64 | bucket u8 -> entries, each hash u32 | physOffset u64
//
// A segment covers the records in [start, end) of the log; segments never
// overlap and are written in log order. A lookup reads one bucket of each
// segment whose store times intersect the query's, and the open segment in
// memory. A hash match is only a candidate: the caller reads the record and
// checks its topic and key, so a collision costs a read, never a wrong
// answer.
//
// Retention deletes whole segments that end at or below the log's new
// start. Readers skip entries below the log's minimum physical offset.
package index

import (
	"encoding/binary"
	"fmt"
)

// Kinds of index entry.
const (
	KindKey  byte = 'K'
	KindUniq byte = 'U'
)

// MaxKeyLen is the longest indexable key.
const MaxKeyLen = 1<<16 - 1

// Key prefixes.
const (
	DirPrefix    = 'x'
	BucketPrefix = 'X'
)

// Buckets is the number of buckets per segment.
const Buckets = 64

// EntrySize is the size of one encoded bucket entry.
const EntrySize = 12

// Hash identifies (kind, topic, key) in buckets: 32-bit FNV-1a over kind,
// len(topic), topic and key (written out: hash/fnv would allocate).
func Hash(kind byte, topic, key string) uint32 {
	const prime = 16777619
	h := uint32(2166136261)
	h = (h ^ uint32(kind)) * prime
	h = (h ^ uint32(byte(len(topic)))) * prime
	for i := 0; i < len(topic); i++ {
		h = (h ^ uint32(topic[i])) * prime
	}
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * prime
	}
	return h
}

// Indexable reports whether a key gets an index entry.
func Indexable(key string) bool { return key != "" && len(key) <= MaxKeyLen }

// DirKey is the key of the segment starting at start.
func DirKey(start int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{DirPrefix}, uint64(start))
}

// BucketKey is the key of one bucket of the segment starting at start.
func BucketKey(start int64, bucket int) []byte {
	return append(binary.BigEndian.AppendUint64([]byte{BucketPrefix}, uint64(start)), byte(bucket))
}

// ParseDirKey returns a segment's start.
func ParseDirKey(k []byte) (int64, error) {
	if len(k) != 9 || k[0] != DirPrefix {
		return 0, fmt.Errorf("index: bad segment key %x", k)
	}
	return int64(binary.BigEndian.Uint64(k[1:])), nil
}

// Dir describes a sealed segment.
type Dir struct {
	End          int64
	MinStoreTime int64
	MaxStoreTime int64
	Entries      uint32
}

// Encode returns d's value encoding.
func (d Dir) Encode() []byte {
	v := make([]byte, 0, 28)
	v = binary.BigEndian.AppendUint64(v, uint64(d.End))
	v = binary.BigEndian.AppendUint64(v, uint64(d.MinStoreTime))
	v = binary.BigEndian.AppendUint64(v, uint64(d.MaxStoreTime))
	return binary.BigEndian.AppendUint32(v, d.Entries)
}

// DecodeDir decodes a segment value.
func DecodeDir(v []byte) (Dir, error) {
	if len(v) != 28 {
		return Dir{}, fmt.Errorf("index: segment value of %d bytes", len(v))
	}
	be := binary.BigEndian
	return Dir{End: int64(be.Uint64(v)), MinStoreTime: int64(be.Uint64(v[8:])),
		MaxStoreTime: int64(be.Uint64(v[16:])), Entries: be.Uint32(v[24:])}, nil
}

// Entry is one index entry.
type Entry struct {
	Hash uint32
	Phys int64
}

// AppendMatches appends to dst the physical offsets of the entries in a
// bucket value whose hash is h.
func AppendMatches(dst []int64, v []byte, h uint32) ([]int64, error) {
	if len(v)%EntrySize != 0 {
		return dst, fmt.Errorf("index: bucket of %d bytes", len(v))
	}
	for ; len(v) > 0; v = v[EntrySize:] {
		if binary.BigEndian.Uint32(v) == h {
			dst = append(dst, int64(binary.BigEndian.Uint64(v[4:])))
		}
	}
	return dst, nil
}

// DecodeBucket appends a bucket value's entries to dst.
func DecodeBucket(dst []Entry, v []byte) ([]Entry, error) {
	if len(v)%EntrySize != 0 {
		return dst, fmt.Errorf("index: bucket of %d bytes", len(v))
	}
	for ; len(v) > 0; v = v[EntrySize:] {
		dst = append(dst, Entry{Hash: binary.BigEndian.Uint32(v), Phys: int64(binary.BigEndian.Uint64(v[4:]))})
	}
	return dst, nil
}

// Segment is a segment being built in memory. It is not safe for
// concurrent use; the store guards it.
type Segment struct {
	Start   int64
	Dir     Dir // End is set by Seal
	buckets [Buckets][]byte
}

// NewSegment opens a segment at start.
func NewSegment(start int64) *Segment { return &Segment{Start: start} }

// Add indexes a record at phys stored at ts under hash h.
func (g *Segment) Add(h uint32, phys, ts int64) {
	b := &g.buckets[h%Buckets]
	*b = binary.BigEndian.AppendUint32(*b, h)
	*b = binary.BigEndian.AppendUint64(*b, uint64(phys))
	if g.Dir.Entries == 0 || ts < g.Dir.MinStoreTime {
		g.Dir.MinStoreTime = ts
	}
	g.Dir.MaxStoreTime = max(g.Dir.MaxStoreTime, ts)
	g.Dir.Entries++
}

// AppendMatches appends the physical offsets of g's entries with hash h.
func (g *Segment) AppendMatches(dst []int64, h uint32) []int64 {
	dst, _ = AppendMatches(dst, g.buckets[h%Buckets], h)
	return dst
}

// Entries appends all of g's entries to dst.
func (g *Segment) Entries(dst []Entry) []Entry {
	for _, b := range g.buckets {
		dst, _ = DecodeBucket(dst, b)
	}
	return dst
}

// Seal ends the segment at end and calls set with each key and value to
// write: the non-empty buckets and the segment's directory entry. The
// values stay owned by g, which must not be added to afterwards.
func (g *Segment) Seal(end int64, set func(k, v []byte)) {
	g.Dir.End = end
	for i, b := range g.buckets {
		if len(b) > 0 {
			set(BucketKey(g.Start, i), b)
		}
	}
	set(DirKey(g.Start), g.Dir.Encode())
}
