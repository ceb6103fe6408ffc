package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// manyExt returns a JSON extFields object of n distinct entries.
func manyExt(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":"v"`, i)
	}
	b.WriteByte('}')
	return b.String()
}

func requestError(t *testing.T, err error, want error) *RequestError {
	t.Helper()
	var re *RequestError
	if !errors.As(err, &re) || !errors.Is(err, want) {
		t.Fatalf("err = %v, want a *RequestError wrapping %v", err, want)
	}
	return re
}

func TestCodeOutOfInt16IsRefusedNotBroken(t *testing.T) {
	for _, code := range []int{70000, -40000} {
		h := fmt.Sprintf(`{"code":%d,"language":"JAVA","version":453,"opaque":77,"flag":0,"extFields":{"a":"b"}}`, code)
		_, err := DecodeFrame(jsonFrame(h, "body"))
		re := requestError(t, err, ErrCodeOutOfRange)
		if re.Code != RespRequestCodeNotSupported || re.Remark != fmt.Sprintf("request code %d not supported", code) ||
			re.Request.Opaque != 77 || re.Request.Language != "JAVA" || re.Request.IsOneway() || re.Request.Fields() != nil {
			t.Fatalf("code %d: %+v %+v", code, re, re.Request)
		}
	}
}

func TestTooManyExtFields(t *testing.T) {
	lim := Limits{MaxExtFields: 10}
	// At the limit, and with duplicates past it, the header decodes.
	for _, ext := range []string{manyExt(10), strings.TrimSuffix(manyExt(10), "}") + `,"k3":"again","k0":"x"}`} {
		c, err := DecodeFrameLimits(jsonFrame(`{"code":10,"opaque":5,"extFields":`+ext+`}`, ""), lim)
		if err != nil || len(c.Fields()) != 10 {
			t.Fatalf("10 fields: %v %v", c, err)
		}
	}
	// Java's field order puts flag and opaque after the extFields: they
	// are still read, so the refusal can be answered (or not, for oneway).
	_, err := DecodeFrameLimits(jsonFrame(`{"code":10,"extFields":`+manyExt(11)+`,"flag":2,"language":"JAVA","opaque":9}`, ""), lim)
	re := requestError(t, err, ErrTooManyExtFields)
	if re.Request.Opaque != 9 || !re.Request.IsOneway() || re.Request.Code != 10 || re.Code != RespSystemError ||
		re.Remark != "request header has more than 10 ext fields (maxExtFields)" {
		t.Fatalf("json: %+v %+v", re, re.Request)
	}
	var ext [][2]string
	for i := range 11 {
		ext = append(ext, [2]string{fmt.Sprint("k", i), "v"})
	}
	_, err = DecodeFrameLimits(binaryFrame(javaBinaryHeader(10, 0, 453, 9, 0, "", ext), ""), lim)
	if re := requestError(t, err, ErrTooManyExtFields); re.Request.Opaque != 9 || re.Request.SerializeType != SerializeRocketMQ {
		t.Fatalf("binary: %+v", re.Request)
	}
	// Malformed input past the limit is still malformed.
	if _, err := DecodeFrameLimits(jsonFrame(`{"extFields":`+strings.TrimSuffix(manyExt(11), "}")+`,"x":{}}}`, ""), lim); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("object past the limit: %v", err)
	}
}

// A header of 100,000 ext fields costs what the limit allows, not what the
// peer sent.
func TestTooManyExtFieldsDoesNotAllocateThem(t *testing.T) {
	frame := jsonFrame(`{"code":10,"opaque":1,"extFields":`+manyExt(100_000)+`}`, "")
	lim := Limits{MaxExtFields: DefaultMaxExtFields}
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := DecodeFrameLimits(frame, lim); !errors.Is(err, ErrTooManyExtFields) {
			t.Fatal(err)
		}
	})
	if allocs > 3*DefaultMaxExtFields {
		t.Fatalf("%v allocations for a header refused at %d ext fields", allocs, DefaultMaxExtFields)
	}
}

func TestHeaderTooLarge(t *testing.T) {
	lim := Limits{MaxHeaderSize: 4 << 10}
	huge := strings.Repeat("x", 8<<10)
	for name, tc := range map[string]struct {
		frame        []byte
		opaque, flag int32
	}{
		"go order":        {jsonFrame(`{"code":10,"language":"GO","version":317,"opaque":41,"flag":2,"remark":"","extFields":{"v":"`+huge+`"}}`, ""), 41, 2},
		"java order":      {jsonFrame(`{"code":10,"extFields":{"v":"`+huge+`"},"flag":0,"language":"JAVA","opaque":42,"serializeTypeCurrentRPC":"JSON","version":453}`, ""), 42, 0},
		"binary":          {binaryFrame(javaBinaryHeader(10, 0, 453, 43, 2, "", [][2]string{{"v", huge}}), ""), 43, 2},
		"many ext fields": {jsonFrame(`{"code":10,"opaque":44,"extFields":`+manyExt(2000)+`}`, ""), 44, 0},
	} {
		_, err := DecodeFrameLimits(tc.frame, lim)
		re := requestError(t, err, ErrHeaderTooLarge)
		if re.Request.Opaque != tc.opaque || re.Request.Flag != tc.flag || re.Request.Code != 10 || re.Code != RespSystemError ||
			!strings.Contains(re.Remark, "exceeds the limit of 4096 bytes (maxHeaderSize)") {
			t.Errorf("%s: %+v %+v", name, re, re.Request)
		}
	}
	// With the opaque out of reach of both ends the frame cannot be
	// answered: it is a bad frame.
	h := `{"code":10,"remark":"` + huge + `","opaque":45,"extFields":{"v":"` + huge + `"}}`
	if _, err := DecodeFrameLimits(jsonFrame(h, ""), lim); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("opaque in the middle: %v", err)
	}
}

// FuzzDecodeFrameLimits checks the limits against the unlimited decoder: a
// frame the limits let through decodes the same without them, one they
// refuse says how to answer it, and one the unlimited decoder accepts
// within the limits is not refused.
func FuzzDecodeFrameLimits(f *testing.F) {
	f.Add(jsonFrame(`{"code":10,"opaque":5,"flag":2,"extFields":{"a":"1","b":"2","c":"3","d":"4"}}`, "body"))
	f.Add(jsonFrame(`{"code":70000,"opaque":5}`, ""))
	f.Add(jsonFrame(`{"code":10,"extFields":{"v":"`+strings.Repeat("x", 100)+`"},"flag":0,"opaque":6}`, ""))
	f.Add(binaryFrame(javaBinaryHeader(10, 0, 453, 9, 0, "", [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}), ""))
	lim := Limits{MaxHeaderSize: 64, MaxExtFields: 3}
	f.Fuzz(func(t *testing.T, frame []byte) {
		got, err := DecodeFrameLimits(frame, lim)
		plain, plainErr := DecodeFrame(frame)
		var re *RequestError
		switch {
		case err == nil:
			if plainErr != nil || !commandsEqual(got, plain) || len(got.Fields()) > lim.MaxExtFields {
				t.Fatalf("limited %v, unlimited %v %v", got, plain, plainErr)
			}
		case errors.As(err, &re):
			if re.Request == nil || re.Remark == "" || re.Request.Fields() != nil || re.Request.Body != nil {
				t.Fatalf("refusal %+v", re)
			}
			if plainErr == nil && len(plain.Fields()) <= lim.MaxExtFields && len(frame) >= 4 &&
				int(binary.BigEndian.Uint32(frame)&0xFFFFFF) <= lim.MaxHeaderSize {
				t.Fatalf("refused %v within the limits: %v", plain, err)
			}
		}
	})
}
