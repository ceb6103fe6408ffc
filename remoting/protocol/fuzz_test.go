package protocol

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"
)

// Fuzz targets for the codec. Seeds live in testdata/fuzz/<Target>/ and are
// real frames captured from the official client (RUNNEL_WRITE_FUZZ_CORPUS=1
// go test -run TestOfficial rewrites them) plus Java-layout binary frames.
// scripts/fuzz.sh runs every target for a short time.

// allocBound is the most a decode of n input bytes may allocate: generous
// for map and string overhead, but far below what trusting a length field
// (up to 2 GiB, or 16 MiB for a header) would cost.
func allocBound(n int) uint64 { return uint64(64*n + 1<<20) }

var memMu sync.Mutex

// allocated reports the bytes fn allocated.
func allocated(fn func()) uint64 {
	memMu.Lock()
	defer memMu.Unlock()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileFrames are inputs whose length fields lie.
func hostileFrames() [][]byte {
	huge := binary.BigEndian.AppendUint32(nil, 0x7FFFFFFF) // 2 GiB frame
	huge = append(huge, 0, 0, 0, 2, '{', '}')
	hdr := binary.BigEndian.AppendUint32(nil, 8) // header length 16 MiB - 1 in an 8-byte frame
	hdr = append(hdr, 0, 0xFF, 0xFF, 0xFF, '{', '}', 0, 0)
	bin := binaryFrame(javaBinaryHeader(1, 9, 1, 1, 0, "", [][2]string{{"k", "v"}}), "")
	binary.BigEndian.PutUint32(bin[4+17+4+2+1:], 0x7FFFFFF0) // value length 2 GiB
	return [][]byte{huge, hdr, withPrefix(bin)}
}

func withPrefix(frame []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(frame))), frame...)
}

// checkFrame is the FuzzDecodeFrame property for one input: the whole wire
// bytes, length prefix included.
func checkFrame(t *testing.T, data []byte) {
	var (
		cmd *Command
		err error
		n   int
	)
	if got := allocated(func() {
		n, err = FrameLength(data, MaxFrameSize)
		if err == nil && n <= len(data)-4 {
			cmd, err = DecodeFrame(data[4 : 4+n])
		}
	}); got > allocBound(len(data)) {
		t.Fatalf("decoding %d bytes allocated %d", len(data), got)
	}
	if err != nil || n > len(data)-4 {
		return // an incomplete frame: a transport would wait, allocating nothing yet
	}
	if cmd.SerializeType == SerializeJSON {
		hl := int(binary.BigEndian.Uint32(data[4:]) & 0xFFFFFF)
		if !json.Valid(data[8 : 8+hl]) {
			t.Fatalf("accepted invalid JSON header %q", data[8:8+hl])
		}
	}
	if again := roundTrip(t, cmd); !commandsEqual(cmd, again) {
		t.Fatalf("unstable:\n %+v\n %+v", *cmd, *again)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, h := range hostileFrames() {
		f.Add(h)
	}
	f.Add(withPrefix(jsonFrame(`{"code":10,"extFields":{"a":"b"}}`, "body")))
	f.Fuzz(checkFrame)
}

// FuzzDecodeHeader feeds the header decoders directly: isBinary picks the
// ROCKETMQ binary decoder, else the JSON one.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(false, []byte(`{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"T"}}`))
	f.Add(false, []byte(`{"remark":"\ud83d\ude00\u00e9\"","x":[{"y":null}],"extFields":{"n":1}}`))
	f.Add(true, javaBinaryHeader(310, 0, 453, 9, 0, "r", [][2]string{{"a", "pg"}, {"b", "T"}}))
	f.Fuzz(func(t *testing.T, isBinary bool, header []byte) {
		var (
			cmd *Command
			err error
		)
		if got := allocated(func() {
			if isBinary {
				cmd, err = decodeBinaryHeader(header)
			} else {
				cmd, err = decodeJSONHeader(header)
			}
		}); got > allocBound(len(header)) {
			t.Fatalf("decoding %d bytes allocated %d", len(header), got)
		}
		if err != nil {
			return
		}
		var out []byte
		if isBinary {
			if out, err = appendBinaryHeader(nil, cmd); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			again, err := decodeBinaryHeader(out)
			if err != nil || !commandsEqual(cmd, again) {
				t.Fatalf("unstable binary header: %v\n %+v\n %+v", err, *cmd, again)
			}
			return
		}
		if !json.Valid(header) {
			t.Fatalf("accepted invalid JSON %q", header)
		}
		out = appendJSONHeader(nil, cmd)
		again, err := decodeJSONHeader(out)
		if err != nil || !commandsEqual(cmd, again) {
			t.Fatalf("unstable JSON header %q: %v\n %+v\n %+v", out, err, *cmd, again)
		}
	})
}

// FuzzTypedHeaders checks, for the extFields of any decodable frame, that
// every typed header that accepts them round-trips: Decode(Encode(h)) == h.
func FuzzTypedHeaders(f *testing.F) {
	f.Add(withPrefix(jsonFrame(`{"extFields":{"topic":"T","queueId":"1","offset":"5"}}`, "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := FrameLength(data, MaxFrameSize)
		if err != nil || n > len(data)-4 {
			return
		}
		cmd, err := DecodeFrame(data[4 : 4+n])
		if err != nil {
			return
		}
		for _, proto := range allHeaders() {
			typ := reflect.TypeOf(proto).Elem()
			h := reflect.New(typ)
			if h.Interface().(extDecoderI).Decode(cmd.Fields()) != nil {
				continue
			}
			again := reflect.New(typ)
			if err := again.Interface().(extDecoderI).Decode(h.Elem().Interface().(extEncoderI).Encode()); err != nil {
				t.Fatalf("%s: %v", typ.Name(), err)
			}
			if !reflect.DeepEqual(h.Elem().Interface(), again.Elem().Interface()) {
				t.Fatalf("%s unstable: %+v vs %+v", typ.Name(), h.Elem(), again.Elem())
			}
		}
		for _, code := range []int16{ReqSendMessage, ReqSendBatchMessage} {
			h, err := DecodeSendMessageHeader(code, cmd.Fields())
			if err != nil {
				continue
			}
			ext := h.Encode()
			if IsSendV2Code(code) {
				ext = h.EncodeV2()
			}
			if again, err := DecodeSendMessageHeader(code, ext); err != nil || again != h {
				t.Fatalf("send %d unstable: %+v vs %+v %v", code, h, again, err)
			}
		}
	})
}

// TestHostileLengthFields runs the frame property over the hostile inputs
// and the checked-in corpus as a plain test, so `go test` covers them
// without -fuzz.
func TestHostileLengthFields(t *testing.T) {
	for _, h := range hostileFrames() {
		checkFrame(t, h)
		if n, err := FrameLength(h, MaxFrameSize); err == nil && n <= len(h)-4 {
			if _, err := DecodeFrame(h[4 : 4+n]); err == nil {
				t.Errorf("hostile frame %x decoded", h)
			}
		}
	}
	// The 2 GiB claim fails at the length check, before any allocation.
	if _, err := FrameLength(hostileFrames()[0], MaxFrameSize); err == nil {
		t.Error("2 GiB frame accepted")
	}
}

// saveCorpus writes a seed for the fuzz targets when
// RUNNEL_WRITE_FUZZ_CORPUS is set; the files are checked in.
func saveCorpus(t *testing.T, name string, wire []byte) {
	if os.Getenv("RUNNEL_WRITE_FUZZ_CORPUS") == "" {
		return
	}
	for _, target := range []string{"FuzzDecodeFrame", "FuzzTypedHeaders"} {
		writeSeed(t, target, name, fmt.Sprintf("[]byte(%q)", wire))
	}
	if len(wire) >= 8 {
		hl := int(binary.BigEndian.Uint32(wire[4:]) & 0xFFFFFF)
		if 8+hl <= len(wire) {
			writeSeed(t, "FuzzDecodeHeader", name, fmt.Sprintf("bool(%v)\n[]byte(%q)", wire[4] == SerializeRocketMQ, wire[8:8+hl]))
		}
	}
}

func writeSeed(t *testing.T, target, name, values string) {
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := "go test fuzz v1\n" + values + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
