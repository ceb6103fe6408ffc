// Package index owns the message-key index: lookups by the KEYS property
// (QUERY_MESSAGE) and by the client's unique id UNIQ_KEY
// (VIEW_MESSAGE_BY_ID, QUERY_MESSAGE with the unique-key flag).
//
// Keys (integers big-endian):
//
//	kind | len(topic) u8 | topic | len(key) u16 | key | physOffset u64 -> storeTimestamp u64
//
// kind is 'K' for KEYS entries and 'U' for UNIQ_KEY entries. All entries of
// one (topic, key) are contiguous and ordered by physical offset, so a
// lookup is a single range scan and can stop at a count.
//
// Entries are written in the same Pebble batch as the record they point at.
// Retention deletes the log by range; it finds a record's index entries by
// reading the record, and deletes them in the same batch as the range.
// Readers still skip entries below the log's minimum physical offset (an
// entry read just before a truncation, or left by an older version).
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

// AppendPrefix appends the prefix shared by all entries of (topic, key).
func AppendPrefix(dst []byte, kind byte, topic, key string) []byte {
	dst = append(dst, kind, byte(len(topic)))
	dst = append(dst, topic...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(key)))
	return append(dst, key...)
}

// AppendKey appends the key of one entry.
func AppendKey(dst []byte, kind byte, topic, key string, phys int64) []byte {
	dst = AppendPrefix(dst, kind, topic, key)
	return binary.BigEndian.AppendUint64(dst, uint64(phys))
}

// Bounds are iterator bounds covering every entry of (topic, key).
func Bounds(kind byte, topic, key string) (lower, upper []byte) {
	lower = AppendPrefix(nil, kind, topic, key)
	upper = append(append([]byte(nil), lower...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	return lower, upper
}

// PhysOf returns the physical offset at the end of an entry key.
func PhysOf(k []byte) (int64, error) {
	if len(k) < 8 {
		return 0, fmt.Errorf("index: bad key %x", k)
	}
	return int64(binary.BigEndian.Uint64(k[len(k)-8:])), nil
}

// EncodeValue encodes an entry's value.
func EncodeValue(storeTimestamp int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(storeTimestamp))
}

// DecodeValue decodes an entry's value.
func DecodeValue(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("index: value of %d bytes", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}
