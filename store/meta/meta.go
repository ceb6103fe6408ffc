// Package meta owns the store's metadata records: topic configs and
// consumer groups' configs (the types are packages topicconf's and
// groupconf's; meta keys, validates and encodes them), consumer
// offsets per group/topic/queue, delay-level progress and named checkpoints.
// They live in the store's Pebble key space beside the log, so a metadata
// change is as durable and as atomic as a message write and goes through the
// same apply path.
//
// Keys (all integers big-endian):
//
//	'M' 'T' | topic                                          -> topicconf.Config (JSON,
//	                                                            attributes included)
//	'M' 'G' | group                                          -> groupconf.Config (JSON, group.go)
//
// (A store op carries a topic or group config in a compact binary form
// instead: AppendTopicBinary, AppendGroupBinary.)
//
//	'M' 'O' | len(group) u8 | group | len(topic) u8 | topic | queueID u32
//	                                                         -> offset u64
//	'M' 'D' | level u32                                      -> offset u64
//	'M' 'C' | name                                           -> opaque bytes
//	'M' 'S' | name                                           -> store state (u64)
//	'M' 'A' | name                                           -> access-control record
//	                                                            (package acl/auth's)
//	'M' 'P' | len(group) u8 | group | len(topic) u8 | topic | queueID u32 | offset u64
//	                                                         -> in-flight record (inflight.go;
//	                                                            package broker/pop's value)
//
// Offsets stored for a group's topic are contiguous under the group's prefix,
// so a group's offsets are one range scan.
package meta

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/topicconf"
)

// Second key bytes.
const (
	kindTopic      = 'T'
	kindOffset     = 'O'
	kindDelay      = 'D'
	kindCheckpoint = 'C'
	kindState      = 'S'
	kindAuth       = 'A'
	prefix         = 'M'
)

// ErrInvalid is returned (wrapped) for a metadata value the store refuses.
var ErrInvalid = errors.New("meta: invalid")

// ValidateTopic checks the limits the key layout and RocketMQ impose on a
// topic config the store keeps.
func ValidateTopic(c *topicconf.Config) error {
	switch {
	case c.TopicName == "" || len(c.TopicName) > 255:
		return fmt.Errorf("%w: topic name %q", ErrInvalid, c.TopicName)
	case c.ReadQueueNums < 0 || c.WriteQueueNums < 0:
		return fmt.Errorf("%w: topic %q queue numbers %d/%d", ErrInvalid, c.TopicName, c.ReadQueueNums, c.WriteQueueNums)
	case !fitsInt32(c.ReadQueueNums, c.WriteQueueNums, c.Perm, c.TopicSysFlag):
		// The binary form (and RocketMQ's Java ints) hold 32 bits.
		return fmt.Errorf("%w: topic %q has a number beyond 32 bits", ErrInvalid, c.TopicName)
	}
	return nil
}

func fitsInt32(vs ...int) bool {
	for _, v := range vs {
		if int(int32(v)) != v {
			return false
		}
	}
	return true
}

// TopicKey is the key of a topic's config.
func TopicKey(topic string) []byte { return append([]byte{prefix, kindTopic}, topic...) }

// TopicBounds cover every topic config.
func TopicBounds() (lower, upper []byte) {
	return []byte{prefix, kindTopic}, []byte{prefix, kindTopic + 1}
}

// EncodeTopic encodes a topic config as the store keeps it, attributes
// (RocketMQ 5's message.type) included. The attributes field is left out
// when there are none, so a config without any encodes to the bytes
// stores wrote before attributes were kept, and an old store reads as it
// was: with none.
func EncodeTopic(c *topicconf.Config) ([]byte, error) {
	return json.Marshal(c)
}

// DecodeTopic decodes a topic config.
func DecodeTopic(v []byte) (topicconf.Config, error) {
	var c topicconf.Config
	if err := json.Unmarshal(v, &c); err != nil {
		return c, fmt.Errorf("meta: topic config: %w", err)
	}
	return c, nil
}

// AppendTopicBinary appends c in the compact form a store op carries
// (the store's op encoding, whose version covers this layout): name |
// readQueueNums | writeQueueNums | perm | topicFilterType | topicSysFlag |
// flags u8 (order 1, attributes follow 2) [| count | count x (key |
// value), sorted by key], strings as uvarint length + bytes, integers as
// varints. A config without attributes has the bytes it had before they
// were carried; a build from before refuses the flag that says they
// follow, rather than drop them.
func AppendTopicBinary(dst []byte, c *topicconf.Config) []byte {
	dst = appendString(dst, c.TopicName)
	dst = binary.AppendVarint(dst, int64(c.ReadQueueNums))
	dst = binary.AppendVarint(dst, int64(c.WriteQueueNums))
	dst = binary.AppendVarint(dst, int64(c.Perm))
	dst = appendString(dst, c.TopicFilterType)
	dst = binary.AppendVarint(dst, int64(c.TopicSysFlag))
	flags := byte(0)
	if c.Order {
		flags |= topicOrder
	}
	if len(c.Attributes) == 0 {
		return append(dst, flags)
	}
	dst = append(dst, flags|topicAttributes)
	dst = binary.AppendUvarint(dst, uint64(len(c.Attributes)))
	for _, k := range slices.Sorted(maps.Keys(c.Attributes)) {
		dst = appendString(dst, k)
		dst = appendString(dst, c.Attributes[k])
	}
	return dst
}

// Flag bits of a topic config's binary form.
const (
	topicOrder = 1 << iota
	topicAttributes
)

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// DecodeTopicBinary decodes what AppendTopicBinary wrote at the start of b
// and returns the bytes it read. It never panics; a truncated or
// malformed config is an ErrInvalid.
func DecodeTopicBinary(b []byte) (topicconf.Config, int, error) {
	r := binReader{b: b}
	c := topicconf.Config{TopicName: r.string(), ReadQueueNums: r.int(), WriteQueueNums: r.int(), Perm: r.int(),
		TopicFilterType: r.string(), TopicSysFlag: r.int()}
	flags := r.byte()
	if flags&^(topicOrder|topicAttributes) != 0 {
		r.fail()
	}
	c.Order = flags&topicOrder != 0
	if flags&topicAttributes != 0 {
		n, k := binary.Uvarint(r.b)
		// Each attribute takes two bytes at least; none at all is
		// written without the flag.
		if k <= 0 || n == 0 || n > uint64(len(r.b)-k)/2 {
			r.fail()
		} else {
			r.b = r.b[k:]
			c.Attributes = make(map[string]string, n)
			prev := ""
			for i := uint64(0); i < n && !r.bad; i++ {
				key, v := r.string(), r.string()
				if i > 0 && key <= prev {
					r.fail() // sorted, once each: one config, one encoding
				}
				c.Attributes[key], prev = v, key
			}
		}
	}
	if r.bad {
		return topicconf.Config{}, 0, fmt.Errorf("%w: binary topic config", ErrInvalid)
	}
	return c, len(b) - len(r.b), nil
}

// binReader reads DecodeTopicBinary's fields; after the first failure
// every read returns a zero value.
type binReader struct {
	b   []byte
	bad bool
}

func (r *binReader) fail() { r.bad, r.b = true, nil }

func (r *binReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// int reads a varint that must fit 32 bits, as the config's fields do.
func (r *binReader) int() int {
	v, n := binary.Varint(r.b)
	if n <= 0 || int64(int32(v)) != v {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *binReader) string() string {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.fail()
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

// OffsetKey is the key of a consumer offset.
func OffsetKey(group, topic string, queueID int32) []byte {
	k := OffsetGroupPrefix(group)
	k = append(k, byte(len(topic)))
	k = append(k, topic...)
	return binary.BigEndian.AppendUint32(k, uint32(queueID))
}

// OffsetGroupPrefix prefixes every offset of a group.
func OffsetGroupPrefix(group string) []byte {
	k := append([]byte{prefix, kindOffset, byte(len(group))}, group...)
	return k
}

// OffsetBounds cover every consumer offset.
func OffsetBounds() (lower, upper []byte) {
	return []byte{prefix, kindOffset}, []byte{prefix, kindOffset + 1}
}

// ParseOffsetKey splits a consumer-offset key.
func ParseOffsetKey(k []byte) (group, topic string, queueID int32, err error) {
	if len(k) < 3 || k[0] != prefix || k[1] != kindOffset {
		return "", "", 0, fmt.Errorf("meta: bad offset key %x", k)
	}
	k = k[2:]
	n := int(k[0])
	if len(k) < 1+n+1 {
		return "", "", 0, fmt.Errorf("meta: bad offset key")
	}
	group, k = string(k[1:1+n]), k[1+n:]
	n = int(k[0])
	if len(k) != 1+n+4 {
		return "", "", 0, fmt.Errorf("meta: bad offset key")
	}
	return group, string(k[1 : 1+n]), int32(binary.BigEndian.Uint32(k[1+n:])), nil
}

// DelayKey is the key of a delay level's progress.
func DelayKey(level int32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefix, kindDelay}, uint32(level))
}

// ParseDelayKey returns the level in a delay key.
func ParseDelayKey(k []byte) (int32, error) {
	if len(k) != 6 || k[0] != prefix || k[1] != kindDelay {
		return 0, fmt.Errorf("meta: bad delay key %x", k)
	}
	return int32(binary.BigEndian.Uint32(k[2:])), nil
}

// DelayBounds cover every delay level.
func DelayBounds() (lower, upper []byte) {
	return []byte{prefix, kindDelay}, []byte{prefix, kindDelay + 1}
}

// CheckpointKey is the key of a named checkpoint.
func CheckpointKey(name string) []byte { return append([]byte{prefix, kindCheckpoint}, name...) }

// AuthKey is the key of a named access-control record.
func AuthKey(name string) []byte { return append([]byte{prefix, kindAuth}, name...) }

// AuthBounds bounds every access-control record's key.
func AuthBounds() (lower, upper []byte) {
	return []byte{prefix, kindAuth}, []byte{prefix, kindAuth + 1}
}

// StateKey is the key of a store-internal state value.
func StateKey(name string) []byte { return append([]byte{prefix, kindState}, name...) }

// EncodeInt64 encodes an offset value.
func EncodeInt64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// DecodeInt64 decodes an offset value.
func DecodeInt64(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("meta: int64 value of %d bytes", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// GetInt64 reads an int64 value; ok is false if the key is absent.
func GetInt64(r pebble.Reader, key []byte) (v int64, ok bool, err error) {
	b, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer closer.Close()
	v, err = DecodeInt64(b)
	return v, err == nil, err
}

// GetBytes reads a value; ok is false if the key is absent.
func GetBytes(r pebble.Reader, key []byte) (v []byte, ok bool, err error) {
	b, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer closer.Close()
	return append([]byte(nil), b...), true, nil
}
