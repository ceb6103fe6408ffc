package protocol

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON header codec is hand-written: the header is on every request and
// response, and encoding/json's reflection costs several times more than a
// scanner that knows the seven fields. It is fuzzed (FuzzDecodeHeader) and
// checked against the official client's own encoder in the tests.
//
// Decoding rules, chosen to match what RocketMQ peers send and accept:
//   - unknown fields (Java's serializeTypeCurrentRPC, ...) are skipped;
//   - null, or an absent field, means the zero value;
//   - extFields values are JSON strings; a number or boolean is kept as its
//     literal text (a sloppy peer still works), an object or array is an error;
//   - string bytes at or above 0x80 pass through unchanged, like the encoder,
//     so decode(encode(c)) == c holds even for invalid UTF-8;
//   - nesting in skipped values is bounded, so hostile input cannot recurse deep.

// maxSkipDepth bounds nesting inside skipped unknown fields.
const maxSkipDepth = 32

// appendJSONHeader writes the header in the order the official Go client
// uses: code, language, version, opaque, flag, remark, extFields. Every
// extFields value is a JSON string; the official client's decoder rejects a
// frame with any other kind of value.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	// An unset language is left out rather than invented, so that
	// decode(encode(c)) == c; peers then use their default (Java: JAVA).
	if c.Language != "" {
		dst = append(dst, `,"language":`...)
		dst = appendJSONString(dst, c.Language)
	}
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"remark":`...)
	dst = appendJSONString(dst, c.Remark)
	dst = append(dst, `,"extFields":{`...)
	first := true
	for k, v := range c.Fields() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSONString(dst, v)
	}
	for _, f := range c.MoreExt {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, f.Key)
		dst = append(dst, ':')
		dst = appendJSONString(dst, f.Value)
	}
	return append(dst, "}}"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 passes through
// byte for byte, as RocketMQ's own encoders do, rather than being replaced.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		switch b {
		case '"', '\\':
			dst = append(dst, '\\', b)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonDecoder scans one header. Its errors name the byte offset.
type jsonDecoder struct {
	b []byte
	i int
	// anyKeys accepts any JSON value as an object key when skipping, as
	// fastjson writes map keys that are objects; it is set only for bodies.
	anyKeys bool
	// maxExt bounds the ext fields kept (0: no bound); tooMany is set when
	// there were more.
	maxExt  int
	tooMany bool
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if d.anyKeys {
		return fmt.Errorf("json at offset %d: %s", d.i, msg)
	}
	return fmt.Errorf("%w: json at offset %d: %s", ErrBadHeader, d.i, msg)
}

func (d *jsonDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (d *jsonDecoder) peek() byte {
	d.ws()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

func (d *jsonDecoder) expect(c byte) error {
	if d.peek() != c {
		if d.i >= len(d.b) {
			return d.errorf("unexpected end, want %q", c)
		}
		return d.errorf("unexpected %q, want %q", d.b[d.i], c)
	}
	d.i++
	return nil
}

// literal consumes lit (true, false or null) if it is next.
func (d *jsonDecoder) literal(lit string) bool {
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

func decodeJSONHeader(b []byte) (*Command, error) { return decodeJSONHeaderLimit(b, 0, true, false) }

// decodeJSONHeaderLimit decodes a header, keeping at most maxExt ext fields
// (0: any number). Past the limit, and for a code outside int16, it reads
// on without keeping anything, so the error can carry the opaque and flag
// that may follow.
//
// With lazy, a hot request's ext fields are left undecoded (extraw.go),
// and with rawAnswers every response's.
func decodeJSONHeaderLimit(b []byte, maxExt int, lazy, rawAnswers bool) (*Command, error) {
	d := jsonDecoder{b: b, maxExt: maxExt}
	c := &Command{}
	badCode := int64(0)
	codeSeen := false
	if err := d.expect('{'); err != nil {
		return nil, err
	}
	if d.peek() == '}' {
		d.i++
	} else {
		for {
			key, err := d.rawString()
			if err != nil {
				return nil, err
			}
			if err := d.expect(':'); err != nil {
				return nil, err
			}
			d.ws()
			switch string(key) {
			case "code":
				v, err := d.integer("code", 32)
				if err != nil {
					return nil, err
				}
				if c.Code = int16(v); int64(c.Code) != v {
					c.Code, badCode = 0, v
				}
				codeSeen = true
			case "language":
				if c.Language, err = d.language(); err != nil {
					return nil, err
				}
			case "version":
				if c.Version, err = d.int16("version"); err != nil {
					return nil, err
				}
			case "opaque":
				if c.Opaque, err = d.int32("opaque"); err != nil {
					return nil, err
				}
			case "flag":
				if c.Flag, err = d.int32("flag"); err != nil {
					return nil, err
				}
			case "remark":
				if d.literal("null") {
					c.Remark = ""
				} else if c.Remark, err = d.str(); err != nil {
					return nil, err
				}
			case "extFields":
				// A request's are lazy when its code is known by now
				// (every RocketMQ client writes it first). The flag may
				// come after, so with rawAnswers they are kept raw
				// whenever this could be a response, code or not, and
				// keepRaw decides at the end.
				if err := d.extFields(c, lazy && (codeSeen && lazyExtCode(c.Code) || rawAnswers)); err != nil {
					return nil, err
				}
			default:
				if err := d.skip(0); err != nil {
					return nil, err
				}
			}
			more, err := d.afterField("after a field")
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return nil, d.errorf("trailing data after header")
	}
	if c.rawExt != nil && !keepRaw(c, lazy, rawAnswers) {
		// A response (unless rawAnswers), or a "code" repeated after the
		// extFields: the map after all.
		c.Fields()
	}
	if badCode != 0 {
		c.ExtFields, c.rawExt, c.rawIdx = nil, nil, nil
		return nil, &RequestError{Request: c, Code: RespRequestCodeNotSupported,
			Remark: fmt.Sprintf("request code %d not supported", badCode), Err: ErrCodeOutOfRange}
	}
	if d.tooMany {
		return nil, tooManyExtFields(c, maxExt)
	}
	return c, nil
}

// integer parses a JSON integer (or null, meaning 0) that fits in bits.
func (d *jsonDecoder) integer(field string, bits int) (int64, error) {
	if d.literal("null") {
		return 0, nil
	}
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == digits || (d.b[digits] == '0' && d.i-digits > 1) {
		return 0, d.errorf("%s: not an integer", field)
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return 0, d.errorf("%s: not an integer", field)
		}
	}
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, bits)
	if err != nil {
		return 0, d.errorf("%s: %s out of range", field, d.b[start:d.i])
	}
	return v, nil
}

func (d *jsonDecoder) int16(field string) (int16, error) {
	v, err := d.integer(field, 16)
	return int16(v), err
}

func (d *jsonDecoder) int32(field string) (int32, error) {
	v, err := d.integer(field, 32)
	return int32(v), err
}

// language accepts a string, null, or a number (Java's enum ordinal).
func (d *jsonDecoder) language() (string, error) {
	if d.literal("null") {
		return "", nil
	}
	if d.i < len(d.b) && d.b[d.i] == '"' {
		raw, err := d.rawString()
		if err != nil {
			return "", err
		}
		// Intern the common names so decoding them does not allocate.
		switch string(raw) {
		case "GO":
			return "GO", nil
		case "JAVA":
			return "JAVA", nil
		}
		return string(raw), nil
	}
	n, err := d.integer("language", 16)
	if err != nil {
		return "", err
	}
	if n >= 0 && int(n) < len(languageCodes) {
		return languageCodes[n], nil
	}
	return "OTHER", nil
}

// extFields reads the extFields value at the cursor into c: into the map,
// or, when lazy, only checked and kept as raw bytes (extraw.go). A lazy
// section with more fields than maxExt is decoded into the map at once,
// where the limit is applied exactly (a repeated key counts once).
func (d *jsonDecoder) extFields(c *Command, lazy bool) error {
	if lazy && c.ExtFields == nil && c.rawExt == nil {
		d.ws()
		start := d.i
		// The check records where each field is, so reading the fields
		// later does not scan the JSON text again.
		// A V2 send's fields take 10-20 bytes each, a long-key one's 20-30:
		// room for the short ones, so the index is one allocation.
		idx := extIndex{base: start, spans: make([]extSpan, 0, min((len(d.b)-d.i)/12+1, 32))}
		n, err := d.walkExtIndex(nil, &idx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if d.maxExt == 0 || n <= d.maxExt {
			c.rawExt, c.rawSer, c.rawIdx = d.b[start:d.i], SerializeJSON, idx.spans
			return nil
		}
		d.i = start
	}
	if c.rawExt != nil {
		// A second extFields key: the first is merged into the map first,
		// as the map decode would have it.
		c.Fields()
	}
	// A typical entry is 20-30 bytes; the hint saves rehashing on the
	// pull and send headers without over-allocating on tiny ones.
	hint := min((len(d.b)-d.i)/24+1, 32)
	_, err := d.walkExt(func(key, val []byte) {
		if d.tooMany {
			return
		}
		if c.ExtFields == nil {
			c.ExtFields = make(map[string]string, hint)
		}
		if d.maxExt > 0 && len(c.ExtFields) >= d.maxExt {
			// Past the limit nothing is kept (a map lookup by a converted
			// []byte does not allocate).
			if _, dup := c.ExtFields[string(key)]; !dup {
				d.tooMany = true
				return
			}
		}
		c.ExtFields[internKey(key)] = internValue(val)
	})
	return err
}

// walkExt reads the extFields value at the cursor, an object of scalars or
// null, calling fn (when set) with each field in order, and returns how
// many there were. A string value is its unescaped bytes, a number or
// boolean its literal text (a sloppy peer still works), null empty; an
// object or array is an error. With fn nil nothing is allocated.
func (d *jsonDecoder) walkExt(fn func(key, val []byte)) (int, error) { return d.walkExtIndex(fn, nil) }

// walkExtIndex is walkExt; with fn nil and idx set it records in idx where
// each field's key and value are.
func (d *jsonDecoder) walkExtIndex(fn func(key, val []byte), idx *extIndex) (int, error) {
	if d.literal("null") {
		return 0, nil
	}
	if err := d.expect('{'); err != nil {
		return 0, err
	}
	if d.peek() == '}' {
		d.i++
		return 0, nil
	}
	keep := fn != nil
	for n := 1; ; n++ {
		d.peek()
		ks := d.i + 1
		key, err := d.rawStringKeep(keep)
		if err != nil {
			return n, err
		}
		ke := d.i - 1
		if err := d.expect(':'); err != nil {
			return n, err
		}
		var val []byte
		vs, ve, vesc := d.i, d.i, false
		switch d.peek() {
		case '"':
			vs = d.i + 1
			if val, err = d.rawStringKeep(keep); err != nil {
				return n, err
			}
			ve, vesc = d.i-1, val == nil
		case '{', '[':
			return n, d.errorf("extFields %q: value is not a scalar", key)
		default:
			if d.literal("null") {
				break
			}
			start := d.i
			if err := d.skip(0); err != nil {
				return n, err
			}
			val = d.b[start:d.i]
			vs, ve = start, d.i
		}
		if keep {
			fn(key, val)
		} else if idx != nil {
			b := idx.base
			idx.spans = append(idx.spans, extSpan{key: [2]int32{int32(ks - b), int32(ke - b)}, val: [2]int32{int32(vs - b), int32(ve - b)},
				keyEsc: key == nil, valEsc: vesc})
		}
		if more, err := d.afterField("in extFields"); err != nil || !more {
			return n, err
		}
	}
}

// afterField steps over the ',' or '}' after an object's field; more says
// a ',' came. where is for the error.
func (d *jsonDecoder) afterField(where string) (more bool, err error) {
	switch d.peek() {
	case ',':
		d.i++
		return true, nil
	case '}':
		d.i++
		return false, nil
	}
	return false, d.errorf("want ',' or '}' %s", where)
}

// str parses a JSON string into a Go string.
func (d *jsonDecoder) str() (string, error) {
	raw, err := d.rawString()
	if err != nil {
		return "", err
	}
	return string(raw), nil
}

// rawString parses a JSON string at the cursor and returns its unescaped
// bytes. Without escapes the result aliases the input; callers copy it.
func (d *jsonDecoder) rawString() ([]byte, error) { return d.rawStringKeep(true) }

// rawStringKeep is rawString; without keep, a string with escapes is only
// checked, and nothing is allocated or returned for it.
func (d *jsonDecoder) rawStringKeep(keep bool) ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.errorf("want a string")
	}
	d.i++
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, nil
		case c == '\\':
			return d.escapedString(start, keep)
		case c < 0x20:
			return nil, d.errorf("control character 0x%02x in string", c)
		}
		d.i++
	}
	return nil, d.errorf("unterminated string")
}

// escapedString finishes a string that contains escapes, from start (just
// after the opening quote); the cursor is at the first backslash. Without
// keep it only checks the string and returns nil.
func (d *jsonDecoder) escapedString(start int, keep bool) ([]byte, error) {
	var out []byte
	if keep {
		// The unescaped string is no longer than its text, which ends at
		// the first quote not escaped: one allocation of at most that (not
		// of the rest of the input, so a header of many short escaped
		// strings does not allocate quadratically).
		end := d.i
		for end < len(d.b) && d.b[end] != '"' {
			if d.b[end] == '\\' {
				end++
			}
			end++
		}
		out = make([]byte, 0, min(end, len(d.b))-start)
		out = append(out, d.b[start:d.i]...)
	}
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return out, nil
		case c < 0x20:
			return nil, d.errorf("control character 0x%02x in string", c)
		case c != '\\':
			if keep {
				out = append(out, c)
			}
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			break
		}
		e := d.b[d.i+1]
		d.i += 2
		if c := jsonEscapes[e]; c != 0 {
			if keep {
				out = append(out, c)
			}
			continue
		}
		if e != 'u' {
			return nil, d.errorf("bad escape \\%c", e)
		}
		r, ok := d.hex4()
		if !ok {
			return nil, d.errorf("bad \\u escape")
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by a low one is one code point;
			// anything else is replaced, as encoding/json does.
			r2 := utf8.RuneError
			if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
				save := d.i
				d.i += 2
				if lo, ok := d.hex4(); ok {
					if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
						r2 = dec
					} else {
						d.i = save
					}
				} else {
					return nil, d.errorf("bad \\u escape")
				}
			}
			r = r2
		}
		if keep {
			out = utf8.AppendRune(out, r)
		}
	}
	return nil, d.errorf("unterminated string")
}

// jsonEscapes maps the byte after a backslash to the byte it stands for,
// for every escape but \u; 0 for the rest.
var jsonEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (d *jsonDecoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

// skip consumes one JSON value of any kind, validating it.
func (d *jsonDecoder) skip(depth int) error {
	if depth > maxSkipDepth {
		return d.errorf("nesting deeper than %d", maxSkipDepth)
	}
	switch c := d.peek(); {
	case c == '"':
		_, err := d.rawString()
		return err
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		d.i++
		if d.peek() == end {
			d.i++
			return nil
		}
		for {
			if c == '{' {
				var err error
				if d.anyKeys {
					err = d.skip(depth + 1)
				} else {
					_, err = d.rawString()
				}
				if err != nil {
					return err
				}
				if err := d.expect(':'); err != nil {
					return err
				}
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			switch d.peek() {
			case ',':
				d.i++
			case end:
				d.i++
				return nil
			default:
				return d.errorf("want ',' or %q", end)
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case d.literal("true"), d.literal("false"), d.literal("null"):
		return nil
	case c == 0:
		return d.errorf("unexpected end")
	default:
		return d.errorf("unexpected %q", c)
	}
}

// number consumes a JSON number (any form).
func (d *jsonDecoder) number() error {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	intStart := d.i
	if n := digits(); n == 0 || (n > 1 && d.b[intStart] == '0') {
		d.i = start
		return d.errorf("bad number")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return d.errorf("bad number")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return d.errorf("bad number")
		}
	}
	return nil
}

// commonExtKeys interns the extFields keys of the hot requests so decoding
// them does not allocate.
var commonExtKeys = internTable(
	"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
	"bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes",
	"batch", "bname", "consumerGroup", "queueOffset", "maxMsgNums", "commitOffset",
	"suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "msgId",
	"transactionId", "MSG_REGION", "TRACE_ON", "nextBeginOffset", "minOffset", "maxOffset",
	"suggestWhichBrokerId", "offset", "timestamp", "group", "delayLevel", "originMsgId",
	"originTopic", "AccessKey", "Signature", "SecurityToken", "clientId",
	"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
)

// commonExtValues interns frequent values.
var commonExtValues = internTable(
	"", "true", "false", "TBW102", "TAG", "-1", "20000", "DefaultRegion", "16",
)

// maxCommonExtValue is the length of the longest of commonExtValues.
var maxCommonExtValue = func() int {
	n := 0
	for v := range commonExtValues {
		n = max(n, len(v))
	}
	return n
}()

func internTable(s ...string) map[string]string {
	m := make(map[string]string, len(s))
	for _, v := range s {
		m[v] = v
	}
	return m
}
