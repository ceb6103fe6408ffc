package protocol

// Undecoded ext fields.
//
// Building a request's ExtFields map was most of what decoding a send or a
// pull header cost: a map insert and a string per field, for a handler
// that then reads every field once into a typed header. So the frame
// decoder leaves the ext fields of the hot requests (lazyExtCode) as the
// bytes they arrived in (Command.rawExt), after checking them as strictly
// as the map decode would (a section that does not parse still fails the
// frame), and
//
//   - a typed header's DecodeCommand reads them without a map: a binary
//     section in one walk into a small table of key/value slices (on the
//     stack), a JSON section from the index of field positions its check
//     recorded (Command.rawIdx), so its text is scanned only once; a value
//     only parsed as a number never becomes a string;
//   - Command.Ext finds one key and copies only its value;
//   - Command.RangeExt walks every field without keeping any;
//   - Command.Fields builds the map on first use, for what needs it (a
//     generic handler, an interceptor's Request hook, the encoders).
//
// Each encoding has one walker (jsonDecoder.walkExt, walkBinaryExt) that
// both the map decode and these use, so a field reads the same either way
// (FuzzLazyExt checks it against the map decode for any frame).
//
// Invariant: the decoder sets rawExt only with ExtFields nil, and rawIdx
// only with a JSON rawExt; Fields clears both. A received request's
// ExtFields is not assigned before Fields has been called (SetExt calls it).

// lazyExtCode reports whether a request with this code keeps its ext
// fields undecoded until they are read: the requests of every send and
// every pull, whose handlers read them through a typed DecodeCommand.
func lazyExtCode(code int16) bool {
	switch code {
	case ReqSendMessage, ReqSendMessageV2, ReqSendBatchMessage, ReqSendReplyMessage, ReqSendReplyMessageV2,
		ReqPullMessage, ReqLitePullMessage, ReqQueryConsumerOffset, ReqUpdateConsumerOffset:
		return true
	}
	return false
}

// keepRaw reports whether the decoder leaves c's ext fields undecoded:
// with lazy, a lazyExtCode request's, and with rawAnswers too any
// response's.
func keepRaw(c *Command, lazy, rawAnswers bool) bool {
	if !lazy {
		return false
	}
	if c.Flag&FlagResponse != 0 {
		return rawAnswers
	}
	return lazyExtCode(c.Code)
}

// extSpan is where one field of a checked JSON ext section is: offsets of
// its key's and its value's text (a string's between its quotes), and
// whether that text has escapes, to be undone when it is read.
type extSpan struct {
	key, val       [2]int32
	keyEsc, valEsc bool
}

// extIndex collects spans while a JSON section is checked; base is the
// section's offset in the header.
type extIndex struct {
	base  int
	spans []extSpan
}

// spanText is the text of span s of raw, unescaped when esc.
func spanText(raw []byte, s [2]int32, esc bool) []byte {
	if !esc {
		return raw[s[0]:s[1]]
	}
	d := jsonDecoder{b: raw, i: int(s[0]) - 1}
	b, _ := d.rawString()
	return b
}

// walkIndexed calls fn with each field of a JSON section from its index,
// without scanning the text; only escaped keys and values are decoded.
func walkIndexed(raw []byte, spans []extSpan, fn func(key, val []byte)) {
	for _, s := range spans {
		fn(spanText(raw, s.key, s.keyEsc), spanText(raw, s.val, s.valEsc))
	}
}

// walkRaw calls fn with each field of c's pending raw section.
func (c *Command) walkRaw(fn func(key, val []byte)) {
	if c.rawIdx != nil {
		walkIndexed(c.rawExt, c.rawIdx, fn)
		return
	}
	_ = walkExt(c.rawSer, c.rawExt, fn)
}

// walkExt calls fn with each ext field of raw, an ext section of the given
// serialize type that the frame decoder has checked, in wire order. key and
// val alias raw unless the JSON text escaped them; they are valid only
// during the call.
func walkExt(serType byte, raw []byte, fn func(key, val []byte)) error {
	if serType == SerializeRocketMQ {
		_, err := walkBinaryExt(raw, fn)
		return err
	}
	d := jsonDecoder{b: raw}
	_, err := d.walkExt(fn)
	return err
}

// decodeRaw builds the ExtFields map of c's pending raw section.
func (c *Command) decodeRaw() map[string]string {
	hint := min(len(c.rawExt)/24+1, 32)
	if c.rawSer == SerializeRocketMQ {
		// Exact for the binary encoding, so the map never grows while it
		// is filled (a guess from the length fell short once ACL's two
		// fields were added to a send's).
		hint = min(countBinaryFields(c.rawExt), 64)
	}
	m := make(map[string]string, hint)
	// The section was checked when the frame was decoded, so the walk
	// cannot fail.
	c.walkRaw(func(key, val []byte) { m[internKey(key)] = internValue(val) })
	return m
}

// internKey returns key as a string, without allocating for the keys of
// the hot requests.
func internKey(key []byte) string {
	if k, ok := commonExtKeys[string(key)]; ok {
		return k
	}
	return string(key)
}

// internValue is internKey for values.
func internValue(val []byte) string {
	if v, ok := commonExtValue(val); ok {
		return v
	}
	return string(val)
}

// commonExtValue returns the shared string of val when it is one of
// commonExtValues. A longer value is not looked up: hashing a send's
// properties (a hundred bytes and more) to learn that they are not "true"
// was a tenth of a send header's decode.
func commonExtValue(val []byte) (string, bool) {
	if len(val) > maxCommonExtValue {
		return "", false
	}
	v, ok := commonExtValues[string(val)]
	return v, ok
}

// rawField is one ext field of a raw section.
type rawField struct{ key, val []byte }

// rawFields is the table a typed header reads a raw section from: every
// field in wire order. A key that appears twice reads as its last value,
// as in the map. The fixed array holds any header a RocketMQ client sends
// without allocating.
type rawFields struct {
	n     int
	small [24]rawField
	more  []rawField
	// letter[k-'a'] is 1 + the index of the last field whose key is the
	// one lowercase letter k, 0 for none: the short keys of the V2 send
	// header ("a" to "n"), read in one step instead of a scan each (a
	// header is read one get per field).
	letter [26]uint8
}

func (t *rawFields) add(key, val []byte) {
	if t.n < len(t.small) {
		t.small[t.n] = rawField{key, val}
	} else {
		t.more = append(t.more, rawField{key, val})
	}
	if len(key) == 1 && key[0]-'a' < 26 {
		if t.n < 255 {
			t.letter[key[0]-'a'] = uint8(t.n + 1)
		} else {
			t.letter[key[0]-'a'] = 0 // past the index: get scans
		}
	}
	t.n++
}

// at is the i'th field.
func (t *rawFields) at(i int) *rawField {
	if i < len(t.small) {
		return &t.small[i]
	}
	return &t.more[i-len(t.small)]
}

// get returns the last value of key. The keys' lengths and first bytes
// are compared before their bytes: most keys of a header differ there,
// and a full comparison is a call.
func (t *rawFields) get(key string) ([]byte, bool) {
	if len(key) == 1 && key[0]-'a' < 26 {
		if i := t.letter[key[0]-'a']; i > 0 {
			return t.at(int(i) - 1).val, true
		}
		if t.n < 255 {
			return nil, false // every one-letter key of the first 255 is indexed
		}
	}
	for i := t.n - 1; i >= 0; i-- {
		f := t.at(i)
		if len(f.key) == len(key) && (key == "" || f.key[0] == key[0]) && string(f.key) == key {
			return f.val, true
		}
	}
	return nil, false
}

// fill reads c's pending raw section into t; it reports false when c has
// none (its fields are in ExtFields, or it has none).
func (t *rawFields) fill(c *Command) bool {
	if c.rawExt == nil {
		return false
	}
	c.walkRaw(t.add)
	return true
}

// fromCommand points d at c's ext fields for the header name: the raw
// section when it is pending (read into d's table), else ExtFields. The
// table lives in d, by value: a pointer to it would escape with the
// decoder's error (escape analysis does not tell d's fields apart), and
// cost an allocation per decode.
func (d *extDecoder) fromCommand(name string, c *Command) {
	d.name = name
	switch {
	case c.rawExt == nil:
		d.ext = c.ExtFields
	case c.rawIdx != nil:
		// A JSON section's index is already a table of its fields.
		d.isRaw, d.idxText, d.idx = true, c.rawExt, c.rawIdx
	default:
		d.isRaw = true
		d.raw.fill(c)
	}
}

// indexGet returns the last value of key in a JSON section's index;
// only that value is unescaped.
func indexGet(text []byte, idx []extSpan, key string) ([]byte, bool) {
	for i := len(idx) - 1; i >= 0; i-- {
		s := &idx[i]
		if (s.keyEsc || int(s.key[1]-s.key[0]) == len(key)) && string(spanText(text, s.key, s.keyEsc)) == key {
			return spanText(text, s.val, s.valEsc), true
		}
	}
	return nil, false
}
