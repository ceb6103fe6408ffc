package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/message"
)

// Prefix is the first byte of every commit-log key.
const Prefix = 'L'

// KeyLen is the length of a commit-log key.
const KeyLen = 9

// ErrNotFound is returned when no record starts at the requested offset.
var ErrNotFound = errors.New("commitlog: no record at offset")

// Key returns the key of the record at phys.
func Key(phys int64) []byte { return AppendKey(make([]byte, 0, KeyLen), phys) }

// AppendKey appends the key of the record at phys to dst.
func AppendKey(dst []byte, phys int64) []byte {
	dst = append(dst, Prefix)
	return binary.BigEndian.AppendUint64(dst, uint64(phys))
}

// DecodeKey returns the offset in a commit-log key.
func DecodeKey(k []byte) (int64, error) {
	if len(k) != KeyLen || k[0] != Prefix {
		return 0, fmt.Errorf("commitlog: bad key %x", k)
	}
	return int64(binary.BigEndian.Uint64(k[1:])), nil
}

// Bounds are the iterator bounds of the whole log.
func Bounds() (lower, upper []byte) { return []byte{Prefix}, []byte{Prefix + 1} }

// Read returns a copy of the record at phys.
func Read(r pebble.Reader, phys int64) ([]byte, error) {
	v, closer, err := r.Get(Key(phys))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w %d", ErrNotFound, phys)
	}
	if err != nil {
		return nil, fmt.Errorf("commitlog: read %d: %w", phys, err)
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

// Tail describes the last record of the log.
type Tail struct {
	Phys           int64 // offset of the last record
	Size           int64 // its size; Phys+Size is the next write position
	StoreTimestamp int64
}

// Last returns the last record's position, or ok=false for an empty log.
func Last(r pebble.Reader) (t Tail, ok bool, err error) {
	lo, hi := Bounds()
	return edge(r, lo, hi, (*pebble.Iterator).Last)
}

// First returns the first record's position, or ok=false for an empty log.
func First(r pebble.Reader) (t Tail, ok bool, err error) {
	lo, hi := Bounds()
	return edge(r, lo, hi, (*pebble.Iterator).First)
}

// SeekGE returns the first record at or after phys.
func SeekGE(r pebble.Reader, phys int64) (t Tail, ok bool, err error) {
	_, hi := Bounds()
	return edge(r, Key(phys), hi, (*pebble.Iterator).First)
}

// edge positions an iterator over [lo, hi) with pos and reads the record
// it lands on.
func edge(r pebble.Reader, lo, hi []byte, pos func(*pebble.Iterator) bool) (Tail, bool, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return Tail{}, false, err
	}
	defer it.Close()
	if !pos(it) {
		return Tail{}, false, it.Error()
	}
	return tailOf(it)
}

func tailOf(it *pebble.Iterator) (Tail, bool, error) {
	phys, err := DecodeKey(it.Key())
	if err != nil {
		return Tail{}, false, err
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return Tail{}, false, err
	}
	ts, err := StoreTimestamp(v)
	if err != nil {
		return Tail{}, false, fmt.Errorf("commitlog: record at %d: %w", phys, err)
	}
	return Tail{Phys: phys, Size: int64(len(v)), StoreTimestamp: ts}, true, nil
}

// StoreTimestamp reads the storeTimestamp of an encoded record.
func StoreTimestamp(rec []byte) (int64, error) {
	if _, err := message.StoredRecordSize(rec); err != nil {
		return 0, err
	}
	sysFlag := int32(binary.BigEndian.Uint32(rec[message.StoredSysFlagPos:]))
	pos := message.StoreTimestampPos(sysFlag)
	return int64(binary.BigEndian.Uint64(rec[pos:])), nil
}

// SearchTime returns the offset of the first record whose storeTimestamp is
// >= ts within [lo, hi) (hi is the write position), relying on timestamps
// that never decrease along the log. It returns hi if every record is older.
func SearchTime(r pebble.Reader, lo, hi, ts int64) (int64, error) {
	// Invariant: every record starting before lo is older than ts, and the
	// first record starting at or after hi (if hi moved) is not.
	end := hi
	for lo < hi {
		mid := lo + (hi-lo)/2
		t, ok, err := SeekGE(r, mid)
		if err != nil {
			return 0, err
		}
		if !ok || t.Phys >= hi {
			hi = mid
			continue
		}
		if t.StoreTimestamp >= ts {
			hi = mid // records starting in [lo, mid) still need checking
			continue
		}
		lo = t.Phys + t.Size
	}
	// lo is now a record boundary or hi.
	t, ok, err := SeekGE(r, lo)
	if err != nil {
		return 0, err
	}
	if !ok || t.Phys > end {
		return end, nil
	}
	return t.Phys, nil
}
