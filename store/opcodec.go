package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/meta"
	"github.com/runnelmq/runnel/topicconf"
)

// The op encoding (see the package doc, "Ops as bytes"). Version 1:
//
//	version u8 (1) | kind u8 | body
//
// with integers as varints (signed) or uvarints (lengths, counts), strings
// and byte strings as uvarint length + bytes, and the body by kind:
//
//	OpAppend            timestamp | count | count stored records back to back
//	OpCommitOffset      count | count x (group | topic | queueID | offset)
//	OpDeleteGroupOffsets group
//	OpPutTopic          meta.AppendTopicBinary's form
//	OpDeleteTopic       topic
//	OpSetDelayOffset    level | offset
//	OpPutCheckpoint     name | value
//	OpTruncate          cutoff | count | count x (topic | queueID | min),
//	                    sorted by topic then queue id
//	OpPutGroup          meta.AppendGroupBinary's form
//	OpDeleteGroup       group
//	OpPutAuth           name | value
//	OpDeleteAuth        name
//	OpInFlight          count | count x (group | topic | queueID | offset | value)
//	                    | count | count x (group | topic | queueID | offset)
//	                    | count | count x (group | topic | queueID | offset):
//	                    the records put, deleted, and the offsets committed
//
// A stored record is RocketMQ's stored-message encoding
// (message.AppendStoredMessage), self-delimiting by its totalSize; an
// append's topic, queue id, tags code, keys and unique key are read back
// from it, so the encoding cannot disagree with the record.
//
// A kind added later (OpInFlight) keeps version 1: a build that does not
// know it refuses it as an unknown kind, as it would an unknown version,
// while every op it knows keeps its bytes. A new field of an existing
// kind is a new version.
const OpVersion = 1

// ErrBadOp is returned (wrapped) by DecodeOp for bytes that are not an op.
var ErrBadOp = errors.New("store: undecodable op")

// OffsetCommit is one consumer offset of an OpCommitOffset.
type OffsetCommit struct {
	Group   string
	Topic   string
	QueueID int32
	Offset  int64
}

// Marshal encodes op (see OpVersion). Only an append's Timestamp is kept:
// no other op uses it.
func (op *Op) Marshal() []byte { return op.AppendEncode(make([]byte, 0, op.encodedSizeHint())) }

func (op *Op) encodedSizeHint() int {
	n := 32
	for i := range op.Messages {
		n += len(op.Messages[i].Record)
	}
	for i := range op.Offsets {
		n += len(op.Offsets[i].Group) + len(op.Offsets[i].Topic) + 24
	}
	for i := range op.InFlightPut {
		n += len(op.InFlightPut[i].Group) + len(op.InFlightPut[i].Topic) + len(op.InFlightPut[i].Value) + 24
	}
	for i := range op.InFlightDelete {
		n += len(op.InFlightDelete[i].Group) + len(op.InFlightDelete[i].Topic) + 24
	}
	return n + len(op.Value) + 16*len(op.QueueMins)
}

// AppendEncode appends op's encoding to dst.
func (op *Op) AppendEncode(dst []byte) []byte {
	dst = append(dst, OpVersion, byte(op.Kind))
	switch op.Kind {
	case OpAppend:
		dst = binary.AppendVarint(dst, op.Timestamp)
		dst = binary.AppendUvarint(dst, uint64(len(op.Messages)))
		for i := range op.Messages {
			dst = append(dst, op.Messages[i].Record...)
		}
	case OpCommitOffset:
		dst = appendOffsets(dst, op.Offsets)
	case OpDeleteGroupOffsets:
		dst = appendString(dst, op.Group)
	case OpPutTopic:
		// A nil config goes as an empty one, refused by Apply as the typed
		// op is (likewise a group's).
		dst = meta.AppendTopicBinary(dst, cmp.Or(op.TopicConfig, &topicconf.Config{}))
	case OpDeleteTopic:
		dst = appendString(dst, op.Topic)
	case OpPutGroup:
		dst = meta.AppendGroupBinary(dst, cmp.Or(op.GroupConfig, &groupconf.Config{}))
	case OpDeleteGroup:
		dst = appendString(dst, op.Group)
	case OpSetDelayOffset:
		dst = binary.AppendVarint(dst, int64(op.Level))
		dst = binary.AppendVarint(dst, op.Offset)
	case OpPutCheckpoint, OpPutAuth:
		dst = appendString(dst, op.Name)
		dst = appendString(dst, string(op.Value))
	case OpDeleteAuth:
		dst = appendString(dst, op.Name)
	case OpInFlight:
		dst = binary.AppendUvarint(dst, uint64(len(op.InFlightPut)))
		for i := range op.InFlightPut {
			r := &op.InFlightPut[i]
			dst = appendInFlightKey(dst, &r.InFlightKey)
			dst = appendString(dst, string(r.Value))
		}
		dst = binary.AppendUvarint(dst, uint64(len(op.InFlightDelete)))
		for i := range op.InFlightDelete {
			dst = appendInFlightKey(dst, &op.InFlightDelete[i])
		}
		dst = appendOffsets(dst, op.Offsets)
	case OpTruncate:
		dst = binary.AppendVarint(dst, op.Cutoff)
		ids := make([]QueueID, 0, len(op.QueueMins))
		for id := range op.QueueMins {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b QueueID) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.ID) - int(b.ID)
		})
		dst = binary.AppendUvarint(dst, uint64(len(ids)))
		for _, id := range ids {
			dst = appendString(dst, id.Topic)
			dst = binary.AppendVarint(dst, int64(id.ID))
			dst = binary.AppendVarint(dst, op.QueueMins[id])
		}
	}
	return dst
}

// appendOffsets appends count | count x (group | topic | queueID | offset).
func appendOffsets(dst []byte, offs []OffsetCommit) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(offs)))
	for _, c := range offs {
		dst = appendString(dst, c.Group)
		dst = appendString(dst, c.Topic)
		dst = binary.AppendVarint(dst, int64(c.QueueID))
		dst = binary.AppendVarint(dst, c.Offset)
	}
	return dst
}

func appendInFlightKey(dst []byte, k *InFlightKey) []byte {
	dst = appendString(dst, k.Group)
	dst = appendString(dst, k.Topic)
	dst = binary.AppendVarint(dst, int64(k.QueueID))
	return binary.AppendVarint(dst, k.Offset)
}

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// DecodeOp decodes an encoded op. An append's records alias b. It never
// panics and allocates in proportion to len(b); anything but exactly one
// well-formed op of a known version is an ErrBadOp. It does not check what
// Apply checks (names, queue ids, whether a truncation fits the store).
func DecodeOp(b []byte) (*Op, error) {
	d := opDecoder{b: b}
	if v := d.byte(); d.err == nil && v != OpVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrBadOp, v, OpVersion)
	}
	op := &Op{Kind: OpKind(d.byte())}
	if d.err != nil {
		return nil, d.err
	}
	switch op.Kind {
	case OpAppend:
		op.Timestamp = d.varint()
		n := d.count(minStoredRecord)
		op.Messages = make([]AppendMessage, 0, n)
		var topic string
		for i := 0; i < n && d.err == nil; i++ {
			ix, size, err := message.IndexStoredRecord(d.b)
			if err != nil {
				d.fail("record %d: %v", i, err)
				break
			}
			op.Messages = append(op.Messages, appendMessageOf(d.b[:size:size], &topic, &ix))
			d.b = d.b[size:]
		}
	case OpCommitOffset:
		op.Offsets = d.offsets(make([]OffsetCommit, 0, 1))
	case OpDeleteGroupOffsets:
		op.Group = d.string()
	case OpPutTopic:
		op.TopicConfig = decodeConfig(&d, meta.DecodeTopicBinary)
	case OpDeleteTopic:
		op.Topic = d.string()
	case OpPutGroup:
		op.GroupConfig = decodeConfig(&d, meta.DecodeGroupBinary)
	case OpDeleteGroup:
		op.Group = d.string()
	case OpSetDelayOffset:
		op.Level, op.Offset = d.int32(), d.varint()
	case OpPutCheckpoint, OpPutAuth:
		op.Name, op.Value = d.string(), []byte(d.string())
	case OpDeleteAuth:
		op.Name = d.string()
	case OpInFlight:
		// Empty lists decode as nil, as an op built in memory has them.
		if n := d.count(5); n > 0 {
			op.InFlightPut = make([]InFlight, 0, n)
			for i := 0; i < n && d.err == nil; i++ {
				op.InFlightPut = append(op.InFlightPut, InFlight{InFlightKey: d.inFlightKey(), Value: []byte(d.string())})
			}
		}
		if n := d.count(4); n > 0 {
			op.InFlightDelete = make([]InFlightKey, 0, n)
			for i := 0; i < n && d.err == nil; i++ {
				op.InFlightDelete = append(op.InFlightDelete, d.inFlightKey())
			}
		}
		op.Offsets = d.offsets(nil)
	case OpTruncate:
		op.Cutoff = d.varint()
		n := d.count(3)
		op.QueueMins = make(map[QueueID]int64, n)
		for i := 0; i < n && d.err == nil; i++ {
			id := QueueID{Topic: d.string(), ID: d.int32()}
			op.QueueMins[id] = d.varint()
		}
	default:
		return nil, fmt.Errorf("%w: kind %d", ErrBadOp, op.Kind)
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the op", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return op, nil
}

// minStoredRecord bounds an append's count by the bytes present (a
// stored record's fixed part is far larger).
const minStoredRecord = 64

// opDecoder reads an op's fields; the first error sticks and every later
// read returns a zero value.
type opDecoder struct {
	b   []byte
	err error
}

func (d *opDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrBadOp, fmt.Sprintf(format, args...))
	}
}

func (d *opDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *opDecoder) varint() int64 { return readVarint(d, binary.Varint, "varint") }

func (d *opDecoder) int32() int32 {
	v := d.varint()
	if int64(int32(v)) != v {
		d.fail("%d out of int32 range", v)
		return 0
	}
	return int32(v)
}

func (d *opDecoder) uvarint() uint64 { return readVarint(d, binary.Uvarint, "uvarint") }

// readVarint reads one value with read (binary.Varint or binary.Uvarint);
// what names it in the failure.
func readVarint[T int64 | uint64](d *opDecoder, read func([]byte) (T, int), what string) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.fail("bad %s", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of elements at least minSize bytes each; a count
// the remaining bytes cannot hold is refused, which bounds allocation.
func (d *opDecoder) count(minSize int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)/minSize) {
		d.fail("count %d with %d bytes left", v, len(d.b))
		return 0
	}
	return int(v)
}

// offsets reads appendOffsets' form into dst (kept as it is when the
// count is 0: an OpCommitOffset's empty list is not nil, an OpInFlight's
// is).
func (d *opDecoder) offsets(dst []OffsetCommit) []OffsetCommit {
	n := d.count(4)
	if n > 0 {
		dst = slices.Grow(dst[:0], n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		dst = append(dst, OffsetCommit{Group: d.string(), Topic: d.string(), QueueID: d.int32(), Offset: d.varint()})
	}
	return dst
}

func (d *opDecoder) inFlightKey() InFlightKey {
	return InFlightKey{Group: d.string(), Topic: d.string(), QueueID: d.int32(), Offset: d.varint()}
}

func (d *opDecoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("string of %d bytes with %d left", n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// decodeConfig reads a topic or group config in the compact form decode
// reads (meta.DecodeTopicBinary, meta.DecodeGroupBinary); nil after an
// earlier failure.
func decodeConfig[C any](d *opDecoder, decode func([]byte) (C, int, error)) *C {
	if d.err != nil {
		return nil
	}
	c, n, err := decode(d.b)
	if err != nil {
		d.fail("%v", err)
	}
	d.b = d.b[n:]
	return &c
}
