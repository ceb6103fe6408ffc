package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
)

func commandsEqual(a, b *Command) bool {
	if a.Code != b.Code || a.Language != b.Language || a.Version != b.Version || a.Opaque != b.Opaque ||
		a.Flag != b.Flag || a.Remark != b.Remark || a.SerializeType != b.SerializeType {
		return false
	}
	return mapsEqual(a.Fields(), b.Fields()) && bytes.Equal(a.Body, b.Body)
}

// jsonFrame builds a frame (after the length prefix) with a JSON header.
func jsonFrame(header string, body string) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(len(header)))
	f = append(f, header...)
	return append(f, body...)
}

func TestJSONHeaderDecode(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   Command
	}{
		{"java style, null remark and extFields, unknown field",
			`{"code":10,"extFields":null,"flag":0,"language":"JAVA","opaque":5,"remark":null,"serializeTypeCurrentRPC":"JSON","version":400}`,
			Command{Code: 10, Language: "JAVA", Version: 400, Opaque: 5}},
		{"absent extFields and remark",
			`{"code":34,"language":"GO","version":317,"opaque":17,"flag":0}`,
			Command{Code: 34, Language: "GO", Version: 317, Opaque: 17}},
		{"empty extFields",
			`{"code":1,"language":"GO","version":317,"opaque":-7,"flag":1,"remark":"","extFields":{}}`,
			Command{Code: 1, Language: "GO", Version: 317, Opaque: -7, Flag: 1}},
		{"escapes in remark and values",
			`{"code":0,"remark":"q\"b\\s\/ \u00e9\ud83d\ude00 \b\f\n\r\t \u0001","extFields":{"k\u0041":"v\"1\n","ü":"中文"}}`,
			Command{Remark: "q\"b\\s/ é😀 \b\f\n\r\t \x01", ExtFields: map[string]string{"kA": "v\"1\n", "ü": "中文"}}},
		{"lone surrogate becomes U+FFFD",
			`{"remark":"a\ud800b\udc00"}`,
			Command{Remark: "a\uFFFDb\uFFFD"}},
		{"unknown language kept, numeric language is Java's ordinal",
			`{"language":"RUST","version":1}`,
			Command{Language: "RUST", Version: 1}},
		{"numeric language", `{"language":9}`, Command{Language: "GO"}},
		{"scalar ext values kept as text",
			`{"extFields":{"n":5,"b":true,"z":null,"f":-1.5e3}}`,
			Command{ExtFields: map[string]string{"n": "5", "b": "true", "z": "", "f": "-1.5e3"}}},
		{"nested unknown fields and whitespace",
			" {\n \"x\" : {\"a\":[1,{\"b\":null},\"s\"],\"c\":{}} , \"code\" : 11 ,\"y\":[], \"flag\":2\r\n}\t",
			Command{Code: 11, Flag: 2}},
		{"null numbers are zero", `{"code":null,"opaque":null}`, Command{}},
		{"raw invalid UTF-8 passes through", "{\"remark\":\"\xff\xfe\"}", Command{Remark: "\xff\xfe"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saveCorpus(t, fmt.Sprintf("json-edge-%d", i), withPrefix(jsonFrame(tt.header, "")))
			got, err := DecodeFrame(jsonFrame(tt.header, ""))
			if err != nil {
				t.Fatal(err)
			}
			if !commandsEqual(got, &tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
			assertReencodes(t, nil, got)
		})
	}
}

func TestJSONHeaderDecodeErrors(t *testing.T) {
	bad := map[string]string{
		"empty":              ``,
		"not an object":      `[]`,
		"truncated":          `{"code":10,`,
		"trailing data":      `{"code":10}x`,
		"two objects":        `{}{}`,
		"code out of int32":  `{"code":4000000000}`,
		"float code":         `{"code":1.5}`,
		"exponent opaque":    `{"opaque":1e3}`,
		"leading zero":       `{"code":010}`,
		"string code":        `{"code":"10"}`,
		"object ext value":   `{"extFields":{"a":{}}}`,
		"array ext value":    `{"extFields":{"a":[]}}`,
		"ext not an object":  `{"extFields":"x"}`,
		"raw control char":   "{\"remark\":\"a\nb\"}",
		"bad escape":         `{"remark":"\x"}`,
		"short unicode":      `{"remark":"\u12"}`,
		"unterminated":       `{"remark":"abc`,
		"missing colon":      `{"code" 10}`,
		"missing comma":      `{"code":10 "flag":1}`,
		"bare word":          `{"x":nope}`,
		"deep nesting":       `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		"unquoted key":       `{code:10}`,
		"remark number":      `{"remark":5}`,
		"trailing comma":     `{"code":1,}`,
		"bad number in skip": `{"x":-}`,
	}
	for name, h := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeFrame(jsonFrame(h, ""))
			if !errors.Is(err, ErrBadHeader) {
				t.Errorf("decode %q: err = %v, want ErrBadHeader", h, err)
			}
		})
	}
}

func TestFrameErrors(t *testing.T) {
	// A length field claiming 2 GiB is refused before anything is allocated.
	if _, err := FrameLength([]byte{0x7F, 0xFF, 0xFF, 0xFF}, MaxFrameSize); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("2 GiB: %v", err)
	}
	if _, err := FrameLength([]byte{0xFF, 0xFF, 0xFF, 0xFF}, MaxFrameSize); !errors.Is(err, ErrFrameTooShort) {
		t.Errorf("negative: %v", err)
	}
	if _, err := FrameLength([]byte{0, 0, 0, 3}, MaxFrameSize); !errors.Is(err, ErrFrameTooShort) {
		t.Errorf("3: %v", err)
	}
	if n, err := FrameLength([]byte{0, 0, 1, 0}, MaxFrameSize); err != nil || n != 256 {
		t.Errorf("256: %d %v", n, err)
	}
	// A header length beyond the frame, and one claiming 16 MiB in a tiny frame.
	for _, f := range [][]byte{{0, 0, 0, 9, '{', '}'}, {0, 0xFF, 0xFF, 0xFF}, {1, 0xFF, 0xFF, 0xFF, 0}} {
		if _, err := DecodeFrame(f); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%x: %v", f, err)
		}
	}
	if _, err := DecodeFrame([]byte{2, 0, 0, 2, '{', '}'}); !errors.Is(err, ErrBadHeader) {
		t.Errorf("unknown serialize type: %v", err)
	}
	if _, err := DecodeFrame([]byte{0, 0}); !errors.Is(err, ErrFrameTooShort) {
		t.Errorf("short: %v", err)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	for _, st := range []byte{SerializeJSON, SerializeRocketMQ} {
		c := &Command{Code: ReqPullMessage, Language: "JAVA", Version: 401, Opaque: 99, Flag: FlagOneway,
			Remark: "r\"é\x00", ExtFields: map[string]string{"topic": "T", "": "empty key", "k": ""},
			Body: []byte{0, 1, 2, 0xFF}, SerializeType: st}
		out, err := EncodeFrame(c)
		if err != nil {
			t.Fatal(err)
		}
		saveCorpus(t, fmt.Sprintf("roundtrip-type%d", st), out)
		if n, err := FrameLength(out, MaxFrameSize); err != nil || n != len(out)-4 {
			t.Fatalf("length prefix %d, frame %d: %v", n, len(out)-4, err)
		}
		if out[4] != st {
			t.Errorf("serialize type byte %d, want %d", out[4], st)
		}
		got, err := DecodeFrame(out[4:])
		if err != nil {
			t.Fatal(err)
		}
		if !commandsEqual(c, got) {
			t.Errorf("type %d: got %+v want %+v", st, *got, *c)
		}
		// The body aliases the frame rather than being copied.
		if &got.Body[0] != &out[len(out)-4] {
			t.Error("body was copied")
		}
	}
	// AppendFrame appends after existing bytes.
	dst, err := AppendFrame([]byte("xy"), &Command{Code: 1})
	if err != nil || string(dst[:2]) != "xy" {
		t.Fatalf("%q %v", dst, err)
	}
	if _, err := DecodeFrame(dst[6:]); err != nil {
		t.Fatal(err)
	}
}

// TestMoreExtEncoded checks that MoreExt goes out after ExtFields in both
// header encodings and that a key in both decodes to MoreExt's value.
func TestMoreExtEncoded(t *testing.T) {
	for _, st := range []byte{SerializeJSON, SerializeRocketMQ} {
		c := &Command{Code: ReqSendMessageV2, ExtFields: map[string]string{"b": "T", "AccessKey": "old"},
			MoreExt: []Field{{"AccessKey", "ak"}, {"Signature", "s\"ig"}}, SerializeType: st}
		got := roundTrip(t, c)
		// A send's header stays undecoded until read: the one-key read
		// and the map must agree that the later value wins.
		if v := got.Ext("AccessKey"); v != "ak" {
			t.Errorf("type %d: Ext(AccessKey) = %q, want ak", st, v)
		}
		want := map[string]string{"b": "T", "AccessKey": "ak", "Signature": "s\"ig"}
		if !maps.Equal(got.Fields(), want) || got.MoreExt != nil {
			t.Errorf("type %d: decoded %v %v, want %v", st, got.ExtFields, got.MoreExt, want)
		}
	}
}

// javaBinaryHeader lays out a header the way Java's
// RocketMQSerializable.rocketMQProtocolEncode does.
func javaBinaryHeader(code int16, lang byte, version int16, opaque, flag int32, remark string, ext [][2]string) []byte {
	var e []byte
	for _, kv := range ext {
		e = binary.BigEndian.AppendUint16(e, uint16(len(kv[0])))
		e = append(e, kv[0]...)
		e = binary.BigEndian.AppendUint32(e, uint32(len(kv[1])))
		e = append(e, kv[1]...)
	}
	h := binary.BigEndian.AppendUint16(nil, uint16(code))
	h = append(h, lang)
	h = binary.BigEndian.AppendUint16(h, uint16(version))
	h = binary.BigEndian.AppendUint32(h, uint32(opaque))
	h = binary.BigEndian.AppendUint32(h, uint32(flag))
	h = binary.BigEndian.AppendUint32(h, uint32(len(remark)))
	h = append(h, remark...)
	h = binary.BigEndian.AppendUint32(h, uint32(len(e)))
	return append(h, e...)
}

func binaryFrame(header []byte, body string) []byte {
	f := binary.BigEndian.AppendUint32(nil, 1<<24|uint32(len(header)))
	f = append(f, header...)
	return append(f, body...)
}

func TestBinaryHeaderJavaLayout(t *testing.T) {
	h := javaBinaryHeader(ReqSendMessageV2, 0, 453, 1234, 0, "réma\"rk",
		[][2]string{{"a", "pg"}, {"b", "T1"}, {"i", "TAGS\x01x\x02"}})
	saveCorpus(t, "java-binary-send-v2", withPrefix(binaryFrame(h, "body")))
	got, err := DecodeFrame(binaryFrame(h, "body"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Command{Code: ReqSendMessageV2, Language: "JAVA", Version: 453, Opaque: 1234, Remark: "réma\"rk",
		ExtFields: map[string]string{"a": "pg", "b": "T1", "i": "TAGS\x01x\x02"}, Body: []byte("body"),
		SerializeType: SerializeRocketMQ}
	if !commandsEqual(got, want) {
		t.Fatalf("got %+v", *got)
	}
	// Our encoder writes the same layout (one ext entry, so order is fixed).
	c := &Command{Code: 11, Language: "GO", Version: 317, Opaque: 7, Flag: 1, Remark: "x",
		ExtFields: map[string]string{"topic": "T"}, SerializeType: SerializeRocketMQ}
	out, err := EncodeFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	wantHdr := javaBinaryHeader(11, 9, 317, 7, 1, "x", [][2]string{{"topic", "T"}})
	if !bytes.Equal(out[8:], wantHdr) {
		t.Errorf("header\n %x\nwant\n %x", out[8:], wantHdr)
	}
	// Empty remark and ext: zero lengths, as Java writes them.
	out, _ = EncodeFrame(&Command{Code: 1, SerializeType: SerializeRocketMQ})
	if !bytes.Equal(out[8:], javaBinaryHeader(1, 9, 0, 0, 0, "", nil)) {
		t.Errorf("empty header %x", out[8:])
	}
	// Language codes: every known one, and an unknown one as OTHER.
	for code, name := range languageCodes {
		got, err := DecodeFrame(binaryFrame(javaBinaryHeader(1, byte(code), 0, 0, 0, "", nil), ""))
		if err != nil || got.Language != name {
			t.Errorf("language %d: %q %v", code, got.Language, err)
		}
	}
	got, _ = DecodeFrame(binaryFrame(javaBinaryHeader(1, 200, 0, 0, 0, "", nil), ""))
	if got.Language != "OTHER" {
		t.Errorf("unknown language: %q", got.Language)
	}
}

func TestBinaryHeaderErrors(t *testing.T) {
	good := javaBinaryHeader(1, 9, 1, 1, 0, "rm", [][2]string{{"k", "v"}})
	cases := map[string][]byte{
		"short":                good[:20],
		"negative remark":      func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[13:], 0xFFFFFFFF); return b }(),
		"huge remark":          func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[13:], 0x7FFFFFFF); return b }(),
		"ext length too long":  func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[19:], 99); return b }(),
		"ext length too short": func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[19:], 2); return b }(),
		"negative key length":  func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint16(b[23:], 0x8001); return b }(),
		"huge value length":    func() []byte { b := bytes.Clone(good); binary.BigEndian.PutUint32(b[26:], 0x7FFFFFF0); return b }(),
		"truncated entry":      append(bytes.Clone(good[:19]), 0, 0, 0, 1, 0),
	}
	for name, h := range cases {
		if _, err := DecodeFrame(binaryFrame(h, "")); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	long := &Command{ExtFields: map[string]string{strings.Repeat("k", 0x8000): "v"}, SerializeType: SerializeRocketMQ}
	if _, err := EncodeFrame(long); err == nil {
		t.Error("a key Java cannot read was encoded")
	}
}

// officialCommand mirrors the official client's RemotingCommand: its
// decoder is jsoniter into exactly this shape (internal/remote/codec.go).
type officialCommand struct {
	Code      int16             `json:"code"`
	Language  any               `json:"language"`
	Version   int16             `json:"version"`
	Opaque    int32             `json:"opaque"`
	Flag      int32             `json:"flag"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
}

func TestOfficialDecoderReadsOurHeaders(t *testing.T) {
	weird := "q\"\\/\x00\x01\x1f\x7f é中😀\u2028\t\r\n\xff\xc3"
	cmds := []*Command{
		NewResponse(&Command{Opaque: 3}, RespSuccess, ""),
		{Code: 17, Remark: weird, ExtFields: map[string]string{weird: weird, "offset": "123", "b": "true"}},
		{Code: 11, Opaque: -1, Flag: 3, ExtFields: PullMessageRequestHeader{Topic: "T", QueueOffset: 1 << 40}.Encode()},
		{Code: 0, ExtFields: SendMessageResponseHeader{MsgID: "x", QueueOffset: -1}.Encode()},
	}
	for _, c := range cmds {
		out, err := EncodeFrame(c)
		if err != nil {
			t.Fatal(err)
		}
		hdr := out[8 : 8+int(binary.BigEndian.Uint32(out[4:])&0xFFFFFF)]
		var oc officialCommand
		if err := jsoniter.Unmarshal(hdr, &oc); err != nil {
			t.Fatalf("official decoder rejects %s: %v", hdr, err)
		}
		if oc.Code != c.Code || oc.Opaque != c.Opaque || oc.Flag != c.Flag || oc.Remark != c.Remark ||
			!mapsEqual(oc.ExtFields, c.ExtFields) {
			t.Errorf("official decoder read %+v from %s", oc, hdr)
		}
		// Every ext value is a JSON string.
		var generic struct {
			ExtFields map[string]any `json:"extFields"`
		}
		if err := json.Unmarshal(hdr, &generic); err != nil {
			t.Fatal(err)
		}
		for k, v := range generic.ExtFields {
			if _, ok := v.(string); !ok {
				t.Errorf("ext %q is %T", k, v)
			}
		}
	}
	// The check above matters: a numeric ext value breaks the official decoder.
	var oc officialCommand
	if err := jsoniter.Unmarshal([]byte(`{"code":0,"extFields":{"offset":5}}`), &oc); err == nil {
		t.Error("jsoniter accepted a numeric ext value; the premise of this test is wrong")
	}
}

// roundTrip encodes c as a frame and decodes it back, as its peer would.
func roundTrip(t *testing.T, c *Command) *Command {
	t.Helper()
	frame, err := EncodeFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeFrame(frame[4:])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ReadFrame reads frames one after another off a stream, refuses a length
// over its limit before reading on, and reports a stream cut mid-frame.
func TestReadFrame(t *testing.T) {
	a := NewRequest(ReqGetBrokerClusterInfo, nil, []byte("first"))
	b := NewRequest(ReqGetBrokerClusterInfo, nil, []byte("second, longer"))
	fa, err := EncodeFrame(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := EncodeFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(append(append([]byte(nil), fa...), fb...))
	for _, want := range []*Command{a, b} {
		frame, err := ReadFrame(r, MaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeFrame(frame)
		if err != nil || got.Opaque != want.Opaque || string(got.Body) != string(want.Body) {
			t.Fatalf("read %+v (%v), want opaque %d body %q", got, err, want.Opaque, want.Body)
		}
	}
	if _, err := ReadFrame(r, MaxFrameSize); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}

	r = bytes.NewReader(fa)
	if _, err := ReadFrame(r, len(fa)-5); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if r.Len() != len(fa)-4 {
		t.Fatalf("%d bytes left after a refused prefix, want the %d after it", r.Len(), len(fa)-4)
	}
	if _, err := ReadFrame(bytes.NewReader(fa[:len(fa)-1]), MaxFrameSize); err != io.ErrUnexpectedEOF {
		t.Fatalf("cut mid-frame: %v, want io.ErrUnexpectedEOF", err)
	}
}
