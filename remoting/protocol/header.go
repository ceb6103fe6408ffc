package protocol

import (
	"errors"
	"fmt"
	"strconv"
)

// Typed headers convert a command's extFields to and from Go structs. Each
// has
//
//	func (h *XHeader) Decode(ext map[string]string) error
//	func (h XHeader) Encode() map[string]string
//
// Decode follows Java's CommandCustomHeader rules: a field Java marks
// @CFNotNull must be present (an empty string counts as present for string
// fields, as in Java); numbers are decimal; booleans are true only for
// "true" in any case (Boolean.parseBoolean), so they never fail. Unknown keys
// are ignored. Encode writes every value as a decimal string or
// "true"/"false", the way the official Go client formats them, and omits
// optional fields that are unset.
//
// Headers with fields of the same types look alike (a flat list of reads,
// one of writes) but are different wire formats, each Java's own class.

// Header decoding errors. A *HeaderError wraps one of them.
var (
	// ErrMissingField means a required extFields key is absent.
	ErrMissingField = errors.New("missing")
	// ErrInvalidField means an extFields value does not parse as its type.
	ErrInvalidField = errors.New("invalid")
)

// HeaderError reports one bad extFields entry of a typed header, e.g.
// `protocol: SEND_MESSAGE header: queueId: invalid integer "x"`.
type HeaderError struct {
	Header string // request or header name, e.g. SEND_MESSAGE
	Field  string // the extFields key
	Value  string // the offending value ("" when missing)
	Err    error  // ErrMissingField or ErrInvalidField
	Kind   string // expected type for ErrInvalidField: "integer"
}

func (e *HeaderError) Error() string {
	if errors.Is(e.Err, ErrMissingField) {
		return fmt.Sprintf("protocol: %s header: %s: missing", e.Header, e.Field)
	}
	return fmt.Sprintf("protocol: %s header: %s: invalid %s %q", e.Header, e.Field, e.Kind, e.Value)
}

func (e *HeaderError) Unwrap() error { return e.Err }

// extDecoder reads fields from ext, or from raw when set (a pending raw
// section, see extraw.go), and keeps the first error, so a Decode method is
// a flat list of reads followed by one error check. Both sources give the
// same fields and the same errors.
type extDecoder struct {
	name string
	ext  map[string]string
	// isRaw says the fields are in raw (a binary section) or idx (a JSON
	// section's index over idxText), not ext.
	isRaw   bool
	raw     rawFields
	idx     []extSpan
	idxText []byte
	err     error
	// strs, when set, makes the strings of raw values (Strings).
	strs *Strings
}

func newExtDecoder(name string, ext map[string]string) *extDecoder {
	return &extDecoder{name: name, ext: ext}
}

func (d *extDecoder) fail(field, value string, err error, kind string) {
	if d.err == nil {
		d.err = &HeaderError{Header: d.name, Field: field, Value: value, Err: err, Kind: kind}
	}
}

// has reports whether key is present.
func (d *extDecoder) has(key string) bool {
	if d.isRaw {
		_, ok := d.rawGet(key)
		return ok
	}
	_, ok := d.ext[key]
	return ok
}

// rawGet looks key up in the raw fields.
func (d *extDecoder) rawGet(key string) ([]byte, bool) {
	if d.idx != nil {
		return indexGet(d.idxText, d.idx, key)
	}
	return d.raw.get(key)
}

// lookup returns the value, as a string (from ext) or as bytes (from raw),
// and whether it is there; a missing required field is recorded.
func (d *extDecoder) lookup(key string, required bool) (s string, b []byte, ok bool) {
	if d.isRaw {
		b, ok = d.rawGet(key)
	} else {
		s, ok = d.ext[key]
	}
	if !ok && required {
		d.fail(key, "", ErrMissingField, "")
	}
	return s, b, ok
}

// str reads a string; required means the key must exist.
func (d *extDecoder) str(key string, required bool) string { return d.strWith(key, required, nil) }

// repeated is str for a value that repeats from one request to the next
// (a group, a topic), made with d.strs when it is set.
func (d *extDecoder) repeated(key string, required bool) string {
	return d.strWith(key, required, d.strs)
}

func (d *extDecoder) strWith(key string, required bool, strs *Strings) string {
	s, b, _ := d.lookup(key, required)
	switch {
	case !d.isRaw:
		return s
	case strs != nil:
		return strs.of(b)
	}
	return internValue(b)
}

// Strings remembers the last values a decoder made strings of for the
// fields that repeat (extDecoder.repeated), and gives the same string back
// for the same bytes: the sends of a run (one producer's, as a rule)
// repeat their group, topic and broker name, and each was an allocation
// each. The zero value is ready to use; it is not safe for concurrent
// use.
type Strings struct {
	recent [4]string
	next   int
}

// maxRecentString is the longest value Strings remembers.
const maxRecentString = 96

func (s *Strings) of(b []byte) string {
	if v, ok := commonExtValue(b); ok {
		return v
	}
	if len(b) > maxRecentString {
		return string(b)
	}
	for _, v := range s.recent {
		if v == string(b) {
			return v
		}
	}
	v := string(b)
	s.recent[s.next] = v
	s.next = (s.next + 1) % len(s.recent)
	return v
}

// number reads key's value as an integer of bits, or def.
func (d *extDecoder) number(key string, required bool, def int64, bits int) int64 {
	s, b, ok := d.lookup(key, required)
	if d.isRaw {
		// A conversion that does not escape: no allocation.
		if len(b) == 0 && !required || !ok {
			return def
		}
		n, err := strconv.ParseInt(string(b), 10, bits)
		if err != nil {
			d.fail(key, string(b), ErrInvalidField, "integer")
			return def
		}
		return n
	}
	if !ok || (s == "" && !required) {
		return def
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		d.fail(key, s, ErrInvalidField, "integer")
		return def
	}
	return n
}

func (d *extDecoder) int64(key string, required bool, def int64) int64 {
	return d.number(key, required, def, 64)
}

func (d *extDecoder) int32(key string, required bool, def int32) int32 {
	return int32(d.number(key, required, int64(def), 32))
}

// bool reads a boolean the Java way: only "true", in any case, is true.
func (d *extDecoder) bool(key string, required bool) bool {
	s, b, _ := d.lookup(key, required)
	if d.isRaw {
		return parseJavaBool(b)
	}
	return parseJavaBool(s)
}

func parseJavaBool[T string | []byte](v T) bool {
	return len(v) == 4 && (v[0]|0x20) == 't' && (v[1]|0x20) == 'r' && (v[2]|0x20) == 'u' && (v[3]|0x20) == 'e'
}

// extEncoder builds an extFields map.
type extEncoder map[string]string

func (e extEncoder) str(key, v string)         { e[key] = v }
func (e extEncoder) int64(key string, v int64) { e[key] = strconv.FormatInt(v, 10) }
func (e extEncoder) int32(key string, v int32) { e[key] = strconv.FormatInt(int64(v), 10) }
func (e extEncoder) bool(key string, v bool)   { e[key] = strconv.FormatBool(v) }

// optStr sets key only when v is not empty.
func (e extEncoder) optStr(key, v string) {
	if v != "" {
		e[key] = v
	}
}

// fieldMap is fs as an extFields map: a header's Encode from its Append.
func fieldMap(fs []Field) map[string]string {
	m := make(map[string]string, len(fs))
	for _, f := range fs {
		m[f.Key] = f.Value
	}
	return m
}

// fieldList is extEncoder for a header sent as a field list
// (Command.MoreExt), in the order its fields are added.
type fieldList struct{ fs []Field }

func (e *fieldList) str(key, v string)         { e.fs = append(e.fs, Field{key, v}) }
func (e *fieldList) int64(key string, v int64) { e.str(key, strconv.FormatInt(v, 10)) }
func (e *fieldList) int32(key string, v int32) { e.str(key, strconv.FormatInt(int64(v), 10)) }
func (e *fieldList) bool(key string, v bool)   { e.str(key, strconv.FormatBool(v)) }

func (e *fieldList) optStr(key, v string) {
	if v != "" {
		e.str(key, v)
	}
}
