package pop

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBadRecord is returned (wrapped) for an in-flight record's value that
// does not decode.
var ErrBadRecord = errors.New("pop: bad in-flight record")

// recordVersion is the first byte of a record's value.
const recordVersion = 1

// Record flags.
const (
	flagOrderly = 1 << iota
	flagAcked
)

// maxAttemptIDLen bounds a FIFO pop's attempt id kept in a record.
const maxAttemptIDLen = 128

// Record is what the store keeps of one popped message in flight, under
// its key (store.InFlightKey: group, the topic and queue it was read
// from, its queue offset). Its value (AppendBinary) is
//
//	version u8 (1) | flags u8 (orderly 1, acked 2) | popTime | invisibleUntil
//	| ckOffset | commitLogOffset | reconsumeTimes | nextOffset | attemptID
//
// integers as varints, the attempt id as uvarint length + bytes.
type Record struct {
	// PopTime (Unix ms) is when the message was popped or its invisible
	// time last changed; a handle must name it.
	PopTime int64
	// InvisibleUntil (Unix ms) is when an un-acknowledged plain pop's
	// message comes back through the retry topic, and when a FIFO pop's
	// message may be popped again.
	InvisibleUntil int64
	// CkOffset is the first offset the pop read on the queue (handles
	// carry it).
	CkOffset int64
	// CommitLogOffset is the message's physical offset, where redelivery
	// reads it.
	CommitLogOffset int64
	// Orderly marks a FIFO pop's record.
	Orderly bool
	// Acked marks a FIFO message acknowledged while an earlier one of its
	// batch is not: the group's offset cannot pass it yet, and it is not
	// delivered again.
	Acked bool
	// ReconsumeTimes is how often the message was delivered before this
	// delivery, for a FIFO pop (its delivery attempt is this plus one); a
	// plain pop's message carries its own.
	ReconsumeTimes int32
	// NextOffset is, for a FIFO pop, the queue offset the group's offset
	// moves to once every message of the batch is acknowledged (past
	// those its filter skipped).
	NextOffset int64
	// AttemptID is a FIFO pop's attempt id: a pop again with the same id
	// gets the same batch.
	AttemptID string
}

// AppendBinary appends the record's value to dst.
func (r *Record) AppendBinary(dst []byte) []byte {
	var flags byte
	if r.Orderly {
		flags |= flagOrderly
	}
	if r.Acked {
		flags |= flagAcked
	}
	dst = append(dst, recordVersion, flags)
	for _, v := range [...]int64{r.PopTime, r.InvisibleUntil, r.CkOffset, r.CommitLogOffset, int64(r.ReconsumeTimes), r.NextOffset} {
		dst = binary.AppendVarint(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.AttemptID)))
	return append(dst, r.AttemptID...)
}

// Marshal returns the record's value.
func (r *Record) Marshal() []byte { return r.AppendBinary(make([]byte, 0, 48+len(r.AttemptID))) }

// DecodeRecord decodes a record's value. It never panics; anything but
// exactly one record of a known version is an ErrBadRecord.
func DecodeRecord(b []byte) (Record, error) {
	if len(b) < 2 || b[0] != recordVersion {
		return Record{}, fmt.Errorf("%w: not version %d", ErrBadRecord, recordVersion)
	}
	flags := b[1]
	if flags&^(flagOrderly|flagAcked) != 0 {
		return Record{}, fmt.Errorf("%w: flags %#x", ErrBadRecord, flags)
	}
	b = b[2:]
	var v [6]int64
	for i := range v {
		x, n := binary.Varint(b)
		if n <= 0 {
			return Record{}, fmt.Errorf("%w: field %d", ErrBadRecord, i)
		}
		v[i], b = x, b[n:]
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxAttemptIDLen || n != uint64(len(b)-k) {
		return Record{}, fmt.Errorf("%w: attempt id", ErrBadRecord)
	}
	if int64(int32(v[4])) != v[4] {
		return Record{}, fmt.Errorf("%w: reconsume times %d", ErrBadRecord, v[4])
	}
	return Record{
		PopTime: v[0], InvisibleUntil: v[1], CkOffset: v[2], CommitLogOffset: v[3], ReconsumeTimes: int32(v[4]),
		NextOffset: v[5], AttemptID: string(b[k:]), Orderly: flags&flagOrderly != 0, Acked: flags&flagAcked != 0,
	}, nil
}
