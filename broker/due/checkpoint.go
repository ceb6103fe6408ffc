package due

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// CheckpointName names the one checkpoint record (a store checkpoint,
// written with OpPutCheckpoint) that holds all of the Service's progress.
const CheckpointName = "due"

// checkpointVersion is the record's first byte.
const checkpointVersion = 1

// Checkpoints is where the Service keeps its checkpoint record;
// *store.Store implements it (the core's implementation writes through
// its backend, so a replicated group's new master resumes from it).
type Checkpoints interface {
	Checkpoint(name string) ([]byte, bool, error)
	PutCheckpoint(name string, value []byte) error
}

// ErrBadCheckpoint is returned (wrapped) for a checkpoint record that
// does not decode.
var ErrBadCheckpoint = errors.New("due: bad checkpoint")

// section is one source's part of the checkpoint record.
type section struct {
	name  string
	state []byte
}

// appendCheckpoint encodes the record: sections sorted by name, so equal
// progress encodes to equal bytes.
func appendCheckpoint(dst []byte, secs []section) []byte {
	secs = slices.Clone(secs)
	slices.SortFunc(secs, func(a, b section) int { return strings.Compare(a.name, b.name) })
	dst = append(dst, checkpointVersion)
	dst = binary.AppendUvarint(dst, uint64(len(secs)))
	for _, s := range secs {
		dst = binary.AppendUvarint(dst, uint64(len(s.name)))
		dst = append(dst, s.name...)
		dst = binary.AppendUvarint(dst, uint64(len(s.state)))
		dst = append(dst, s.state...)
	}
	return dst
}

// decodeCheckpoint decodes the record; each state aliases b. A section
// name appears at most once.
func decodeCheckpoint(b []byte) ([]section, error) {
	if len(b) == 0 || b[0] != checkpointVersion {
		return nil, fmt.Errorf("%w: not version %d", ErrBadCheckpoint, checkpointVersion)
	}
	r := reader{b: b[1:]}
	n := r.uvarint()
	if n > uint64(len(r.b)) { // every section takes two bytes at least
		return nil, fmt.Errorf("%w: %d sections in %d bytes", ErrBadCheckpoint, n, len(b))
	}
	out := make([]section, 0, n)
	for range n {
		name := string(r.bytes())
		state := r.bytes()
		if r.err != nil {
			break
		}
		if name == "" || slices.ContainsFunc(out, func(s section) bool { return s.name == name }) {
			return nil, fmt.Errorf("%w: section %q empty or twice", ErrBadCheckpoint, name)
		}
		out = append(out, section{name: name, state: state})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, r.err)
	}
	return out, nil
}

// appendLanes encodes a queue source's section: for each lane, in lane
// order, its id, the next offset still to deliver and the cursor.
func appendLanes(dst []byte, lanes []laneState) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(lanes)))
	for _, l := range lanes {
		dst = binary.AppendUvarint(dst, uint64(l.id))
		dst = binary.AppendVarint(dst, l.next)
		dst = binary.AppendVarint(dst, l.cursor)
	}
	return dst
}

// decodeLanes decodes a queue source's section; lane ids are increasing.
func decodeLanes(b []byte) ([]laneState, error) {
	r := reader{b: b}
	n := r.uvarint()
	if n > uint64(len(b)) { // every lane takes three bytes at least
		return nil, fmt.Errorf("%w: %d lanes in %d bytes", ErrBadCheckpoint, n, len(b))
	}
	out := make([]laneState, 0, n)
	for range n {
		id := r.uvarint()
		l := laneState{next: r.varint(), cursor: r.varint()}
		if r.err != nil {
			break
		}
		if id > math.MaxInt32 || (len(out) > 0 && int32(id) <= out[len(out)-1].id) {
			return nil, fmt.Errorf("%w: lane %d out of order", ErrBadCheckpoint, id)
		}
		l.id = int32(id)
		out = append(out, l)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, r.err)
	}
	return out, nil
}

// reader reads varints and length-prefixed bytes, remembering the first
// error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }
func (r *reader) varint() int64   { return readVarint(r, binary.Varint) }

func readVarint[T uint64 | int64](r *reader, decode func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := decode(r.b)
	if n <= 0 {
		r.err = errors.New("truncated or overlong varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%d bytes wanted, %d left", n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}
