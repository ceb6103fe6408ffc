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
	for k, v := range c.ExtFields {
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

func decodeJSONHeader(b []byte) (*Command, error) { return decodeJSONHeaderLimit(b, 0) }

// decodeJSONHeaderLimit decodes a header, keeping at most maxExt ext fields
// (0: any number). Past the limit, and for a code outside int16, it reads
// on without keeping anything, so the error can carry the opaque and flag
// that may follow.
func decodeJSONHeaderLimit(b []byte, maxExt int) (*Command, error) {
	d := jsonDecoder{b: b, maxExt: maxExt}
	c := &Command{}
	badCode := int64(0)
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
			case "language":
				if c.Language, err = d.language(); err != nil {
					return nil, err
				}
			case "version":
				v, err := d.integer("version", 16)
				if err != nil {
					return nil, err
				}
				c.Version = int16(v)
			case "opaque":
				v, err := d.integer("opaque", 32)
				if err != nil {
					return nil, err
				}
				c.Opaque = int32(v)
			case "flag":
				v, err := d.integer("flag", 32)
				if err != nil {
					return nil, err
				}
				c.Flag = int32(v)
			case "remark":
				if d.literal("null") {
					c.Remark = ""
				} else if c.Remark, err = d.str(); err != nil {
					return nil, err
				}
			case "extFields":
				if err := d.extFields(c); err != nil {
					return nil, err
				}
			default:
				if err := d.skip(0); err != nil {
					return nil, err
				}
			}
			switch d.peek() {
			case ',':
				d.i++
				continue
			case '}':
				d.i++
			default:
				return nil, d.errorf("want ',' or '}' after a field")
			}
			break
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return nil, d.errorf("trailing data after header")
	}
	if badCode != 0 {
		c.ExtFields = nil
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

func (d *jsonDecoder) extFields(c *Command) error {
	if d.literal("null") {
		return nil
	}
	if err := d.expect('{'); err != nil {
		return err
	}
	if d.peek() == '}' {
		d.i++
		return nil
	}
	if c.ExtFields == nil {
		// A typical entry is 20-30 bytes; the hint saves rehashing on the
		// pull and send headers without over-allocating on tiny ones.
		c.ExtFields = make(map[string]string, min((len(d.b)-d.i)/24+1, 32))
	}
	for {
		rawKey, err := d.rawString()
		if err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		if d.maxExt > 0 && len(c.ExtFields) >= d.maxExt {
			// Past the limit nothing is kept (a map lookup by a converted
			// []byte does not allocate); the value is only validated.
			if _, dup := c.ExtFields[string(rawKey)]; !dup {
				d.tooMany = true
			}
		}
		if d.tooMany {
			if c := d.peek(); c == '{' || c == '[' {
				return d.errorf("extFields %q: value is not a scalar", rawKey)
			}
			if err := d.skip(0); err != nil {
				return err
			}
		} else if err := d.extValue(c, rawKey); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
			continue
		case '}':
			d.i++
			return nil
		default:
			return d.errorf("want ',' or '}' in extFields")
		}
	}
}

// extValue reads the value of the ext field rawKey into c.
func (d *jsonDecoder) extValue(c *Command, rawKey []byte) error {
	key, ok := commonExtKeys[string(rawKey)]
	if !ok {
		key = string(rawKey)
	}
	var val string
	switch d.peek() {
	case '"':
		raw, err := d.rawString()
		if err != nil {
			return err
		}
		if v, ok := commonExtValues[string(raw)]; ok {
			val = v
		} else {
			val = string(raw)
		}
	case '{', '[':
		return d.errorf("extFields %q: value is not a scalar", key)
	default:
		if d.literal("null") {
			break
		}
		start := d.i
		if err := d.skip(0); err != nil {
			return err
		}
		val = string(d.b[start:d.i])
	}
	c.ExtFields[key] = val
	return nil
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
func (d *jsonDecoder) rawString() ([]byte, error) {
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
			return d.escapedString(start)
		case c < 0x20:
			return nil, d.errorf("control character 0x%02x in string", c)
		}
		d.i++
	}
	return nil, d.errorf("unterminated string")
}

// escapedString finishes a string that contains escapes, from start (just
// after the opening quote); the cursor is at the first backslash.
func (d *jsonDecoder) escapedString(start int) ([]byte, error) {
	// Capacity grows with the string, not with the rest of the input: a
	// header of many short escaped strings must not allocate quadratically.
	out := make([]byte, 0, d.i-start+16)
	out = append(out, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return out, nil
		case c < 0x20:
			return nil, d.errorf("control character 0x%02x in string", c)
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			break
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
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
			out = utf8.AppendRune(out, r)
		default:
			return nil, d.errorf("bad escape \\%c", e)
		}
	}
	return nil, d.errorf("unterminated string")
}

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

func internTable(s ...string) map[string]string {
	m := make(map[string]string, len(s))
	for _, v := range s {
		m[v] = v
	}
	return m
}
