package protocol

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// eagerDecode is the map decode of frame: what DecodeFrame gave before
// ext fields could stay undecoded.
func eagerDecode(frame []byte) (*Command, error) { return decodeFrame(frame, Limits{}, false) }

// decodeUndecodedAndEager decodes frame within lim, failing t unless its
// ext fields stay undecoded, and with the map decode.
func decodeUndecodedAndEager(t *testing.T, frame []byte, lim Limits) (undecoded, eager *Command) {
	t.Helper()
	undecoded, err := DecodeFrameLimits(frame, lim)
	if err != nil {
		t.Fatal(err)
	}
	if eager, err = eagerDecode(frame); err != nil {
		t.Fatal(err)
	}
	if undecoded.ExtFields != nil || undecoded.rawExt == nil {
		t.Fatalf("ext fields decoded into a map: %v", undecoded.ExtFields)
	}
	return undecoded, eager
}

// encodedFrames is every command of cmds encoded in each header encoding,
// named by the command and the encoding, the length prefix left off (as
// DecodeFrame takes a frame).
func encodedFrames(t testing.TB, cmds map[string]*Command) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, c := range cmds {
		for _, st := range []byte{SerializeJSON, SerializeRocketMQ} {
			cc := *c
			cc.SerializeType = st
			b, err := EncodeFrame(&cc)
			if err != nil {
				t.Fatal(err)
			}
			out[name+serName(st)] = b[4:]
		}
	}
	return out
}

// hotFrames are the frames of the hot requests in both encodings, as the
// official client and ours fill them.
func hotFrames(t testing.TB) map[string][]byte {
	out := encodedFrames(t, benchCommands())
	v2 := &Command{Code: ReqSendMessageV2, Language: "GO", Version: 317, Opaque: 3, SerializeType: SerializeRocketMQ,
		ExtFields: SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
			QueueID: 2, SysFlag: 0, BornTimestamp: 1764403200000, Properties: "TAGS\x01a\x02", MaxReconsumeTimes: -1}.EncodeV2(),
		Body: []byte("body")}
	b, err := EncodeFrame(v2)
	if err != nil {
		t.Fatal(err)
	}
	out["sendV2Binary"] = b[4:]
	return out
}

// corpusFrames are the frames of FuzzDecodeFrame's checked-in corpus (the
// official client's requests), without their length prefix.
func corpusFrames(t testing.TB) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecodeFrame", "*"))
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSpace(strings.TrimPrefix(string(data), "go test fuzz v1\n"))
		q, ok := strings.CutPrefix(line, "[]byte(")
		if !ok {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
		if err == nil && len(s) > 4 {
			out = append(out, []byte(s[4:]))
		}
	}
	return out
}

// TestLazyExtHotRequests checks the send and pull requests in both
// encodings: they decode with no map, the typed decode reads what the map
// decode reads, and nothing builds the map until Fields is called.
func TestLazyExtHotRequests(t *testing.T) {
	for name, frame := range hotFrames(t) {
		if strings.HasPrefix(name, "pullResponse") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			lazy, eager := decodeUndecodedAndEager(t, frame, Limits{})
			for k, v := range eager.ExtFields {
				if got := lazy.Ext(k); got != v {
					t.Errorf("Ext(%q) = %q, map has %q", k, got, v)
				}
			}
			switch lazy.Code {
			case ReqPullMessage:
				var got, want PullMessageRequestHeader
				if err := got.DecodeCommand(lazy); err != nil || want.Decode(eager.ExtFields) != nil || got != want {
					t.Fatalf("pull header %+v %v, want %+v", got, err, want)
				}
			default:
				got, err := DecodeSendMessageCommand(lazy)
				want, werr := DecodeSendMessageHeader(eager.Code, eager.ExtFields)
				if err != nil || werr != nil || got != want || got.Topic == "" {
					t.Fatalf("send header %+v %v, want %+v %v", got, err, want, werr)
				}
			}
			if lazy.ExtFields != nil {
				t.Fatal("a read built the map")
			}
			if !mapsEqual(lazy.Fields(), eager.ExtFields) || lazy.rawExt != nil {
				t.Fatalf("Fields() = %v, want %v", lazy.ExtFields, eager.ExtFields)
			}
		})
	}
}

// TestLazyExtResponsesAndOtherCodes: only the hot requests stay undecoded;
// a response with a hot code's number (FLUSH_DISK_TIMEOUT is 10, as
// SEND_MESSAGE) and every other request have their map at once, in either
// encoding and whatever the JSON field order (Java's fastjson writes the
// flag after the extFields).
func TestLazyExtResponsesAndOtherCodes(t *testing.T) {
	frames := [][]byte{
		jsonFrame(`{"code":10,"extFields":{"msgId":"m"},"flag":1,"opaque":2}`, ""),
		jsonFrame(`{"code":105,"extFields":{"topic":"T"},"flag":0}`, ""),
		jsonFrame(`{"extFields":{"topic":"T"},"code":10}`, ""), // the code after the ext fields
		jsonFrame(`{"code":10,"extFields":{"topic":"T"},"code":105}`, ""),
		binaryFrame(javaBinaryHeader(10, 0, 453, 2, FlagResponse, "", [][2]string{{"msgId", "m"}}), ""),
		binaryFrame(javaBinaryHeader(105, 0, 453, 2, 0, "", [][2]string{{"topic", "T"}}), ""),
	}
	for _, f := range frames {
		c, err := DecodeFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		if c.rawExt != nil || len(c.ExtFields) != 1 {
			t.Errorf("%q: ext %v, raw %q", f, c.ExtFields, c.rawExt)
		}
	}
	// Two extFields keys merge, as in the map decode.
	c, err := DecodeFrame(jsonFrame(`{"code":10,"extFields":{"a":"1","b":"2"},"extFields":{"b":"3"}}`, ""))
	if err != nil || !mapsEqual(c.Fields(), map[string]string{"a": "1", "b": "3"}) {
		t.Fatalf("%v %v", c, err)
	}
}

// TestRawAnswers: decoded with Limits.RawAnswers (a remoting connection),
// every response keeps its ext fields undecoded, in either encoding and
// wherever JSON puts the flag, and the typed answers read from them what
// the map gives; requests are as without it.
func TestRawAnswers(t *testing.T) {
	send := [][2]string{{"msgId", "0A00000100002A9F0000000000000042"}, {"queueId", "3"}, {"queueOffset", "66"},
		{"MSG_REGION", "DefaultRegion"}, {"TRACE_ON", "true"}, {"transactionId", "7F00"}}
	pull := [][2]string{{"suggestWhichBrokerId", "0"}, {"nextBeginOffset", "32"}, {"minOffset", "0"}, {"maxOffset", "40"}}
	jsonExt := func(fs [][2]string) string {
		var parts []string
		for _, f := range fs {
			parts = append(parts, strconv.Quote(f[0])+":"+strconv.Quote(f[1]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	frames := map[string][]byte{
		"sendBinary":      binaryFrame(javaBinaryHeader(0, 0, 453, 2, FlagResponse, "", send), ""),
		"sendJSON":        jsonFrame(`{"code":0,"flag":1,"opaque":2,"extFields":`+jsonExt(send)+`}`, ""),
		"sendJSONFlagAft": jsonFrame(`{"code":0,"extFields":`+jsonExt(send)+`,"flag":1,"opaque":2}`, ""),
		"pullBinary":      binaryFrame(javaBinaryHeader(19, 0, 453, 2, FlagResponse, "", pull), "body"),
		"pullJSON":        jsonFrame(`{"code":19,"extFields":`+jsonExt(pull)+`,"flag":1}`, "body"),
	}
	for name, f := range frames {
		t.Run(name, func(t *testing.T) {
			raw, eager := decodeUndecodedAndEager(t, f, Limits{RawAnswers: true})
			if strings.HasPrefix(name, "send") {
				var got, want SendMessageResponseHeader
				if err := got.DecodeCommand(raw); err != nil || want.Decode(eager.ExtFields) != nil || got != want || got.QueueOffset != 66 {
					t.Fatalf("send answer %+v %v, want %+v", got, err, want)
				}
			} else {
				var got, want PullMessageResponseHeader
				if err := got.DecodeCommand(raw); err != nil || want.Decode(eager.ExtFields) != nil || got != want || got.MaxOffset != 40 {
					t.Fatalf("pull answer %+v %v, want %+v", got, err, want)
				}
			}
			if raw.ExtFields != nil {
				t.Fatal("a typed read built the map")
			}
			if !mapsEqual(raw.Fields(), eager.ExtFields) {
				t.Fatalf("Fields() = %v, want %v", raw.ExtFields, eager.ExtFields)
			}
		})
	}
	// A request that is not a send or a pull still has its map.
	c, err := DecodeFrameLimits(binaryFrame(javaBinaryHeader(105, 0, 453, 2, 0, "", [][2]string{{"topic", "T"}}), ""), Limits{RawAnswers: true})
	if err != nil || c.rawExt != nil || c.ExtFields["topic"] != "T" {
		t.Fatalf("%v %v", c, err)
	}
}

// TestLazyExtBadHeaders: a hot request whose ext fields do not parse is
// still refused by the frame decoder (the connection is closed, as before),
// and one whose values are wrong gets the same HeaderError as from the map.
func TestLazyExtBadHeaders(t *testing.T) {
	for _, f := range [][]byte{
		jsonFrame(`{"code":10,"extFields":{"a":{"x":1}}}`, ""),
		jsonFrame(`{"code":10,"extFields":{"a":"\x01"}}`, ""),
		jsonFrame(`{"code":310,"extFields":{"a":"\u12"}}`, ""),
		jsonFrame(`{"code":11,"extFields":{"a":"b",}}`, ""),
		binaryFrame(append(javaBinaryHeader(11, 0, 453, 2, 0, "", [][2]string{{"topic", "T"}}), 0), ""),
	} {
		if _, err := DecodeFrame(f); err == nil {
			t.Errorf("%q decoded", f)
		}
	}
	for _, enc := range []byte{SerializeJSON, SerializeRocketMQ} {
		ext := map[string]string{"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "x", "f": "0", "g": "1", "h": "0"}
		lazy := roundTrip(t, &Command{Code: ReqSendMessageV2, SerializeType: enc, ExtFields: ext})
		_, err := DecodeSendMessageCommand(lazy)
		_, want := DecodeSendMessageHeader(ReqSendMessageV2, ext)
		if err == nil || want == nil || err.Error() != want.Error() ||
			err.Error() != `protocol: SEND_MESSAGE_V2 header: e (queueId): invalid integer "x"` {
			t.Errorf("%s: %v, map decode %v", serName(enc), err, want)
		}
		delete(ext, "a")
		lazy = roundTrip(t, &Command{Code: ReqSendMessageV2, SerializeType: enc, ExtFields: ext})
		if _, err = DecodeSendMessageCommand(lazy); err == nil || err.Error() != `protocol: SEND_MESSAGE_V2 header: a (producerGroup): missing` {
			t.Errorf("%s: %v", serName(enc), err)
		}
	}
}

// TestLazyExtAllocations: the typed decode of a send or pull allocates only
// the strings it keeps (group, topic, properties), not a map entry per
// field; the frame decode allocates only the command.
func TestLazyExtAllocations(t *testing.T) {
	for name, frame := range hotFrames(t) {
		if strings.HasPrefix(name, "pullResponse") {
			continue
		}
		var decodeErr error
		allocs := testing.AllocsPerRun(50, func() {
			c, err := DecodeFrame(frame)
			if err != nil {
				decodeErr = err
				return
			}
			if c.Code == ReqPullMessage {
				var h PullMessageRequestHeader
				decodeErr = h.DecodeCommand(c)
			} else {
				_, decodeErr = DecodeSendMessageCommand(c)
			}
		})
		if decodeErr != nil {
			t.Fatal(decodeErr)
		}
		// The command, and up to four kept strings; in JSON the index of
		// the fields, and the unescaping of the properties' \u0001s.
		max := 5.0
		if strings.HasSuffix(name, "json") {
			max = 7
		}
		if allocs > max {
			t.Errorf("%s: %v allocations, want <= %v", name, allocs, max)
		}
	}
}

// checkDecodeCommand fails t unless each pair's first header, read from
// c by DecodeCommand, and its second, read from ext by Decode, come out
// the same, or fail the same.
func checkDecodeCommand(t *testing.T, c *Command, ext map[string]string, pairs ...[2]any) {
	t.Helper()
	for _, pair := range pairs {
		err := pair[0].(interface{ DecodeCommand(*Command) error }).DecodeCommand(c)
		werr := pair[1].(extDecoderI).Decode(ext)
		if !reflect.DeepEqual(pair[0], pair[1]) || errString(err) != errString(werr) {
			t.Fatalf("%T: %+v %v, map decode %+v %v", pair[0], pair[0], err, pair[1], werr)
		}
	}
}

// FuzzLazyExt checks undecoded ext fields against the map decode for any
// frame: both accept or refuse it; Fields gives the map; Ext gives each
// value; every typed DecodeCommand gives the header (or the error) Decode
// gives from the map, whatever the request code; nothing panics.
func FuzzLazyExt(f *testing.F) {
	for _, fr := range hotFrames(f) {
		f.Add(fr)
	}
	for _, fr := range corpusFrames(f) {
		f.Add(fr)
	}
	f.Add(jsonFrame(`{"code":310,"extFields":{"b":"T","b":"U","topic":"V","e":"1 ","g":"-0","k":"TRUE"}}`, ""))
	f.Add(jsonFrame(`{"code":11,"extFields":{"consumerGroup":"g\u00e9","queueId":7,"sysFlag":null,"topic":"\"T\""}}`, ""))
	f.Add(binaryFrame(javaBinaryHeader(320, 0, 453, 9, 0, "", [][2]string{{"a", "pg"}, {"b", "T"}, {"", "x"}, {"m", "true"}}), ""))
	f.Fuzz(func(t *testing.T, frame []byte) {
		lazy, err := DecodeFrame(frame)
		eager, eagerErr := eagerDecode(frame)
		if (err == nil) != (eagerErr == nil) {
			t.Fatalf("lazy %v, map decode %v", err, eagerErr)
		}
		if err != nil {
			return
		}
		if lazy.rawExt != nil && !lazyExtCode(lazy.Code) {
			t.Fatalf("code %d left undecoded", lazy.Code)
		}
		raw, rawErr := DecodeFrameLimits(frame, Limits{RawAnswers: true})
		if (rawErr == nil) != (eagerErr == nil) {
			t.Fatalf("raw answers %v, map decode %v", rawErr, eagerErr)
		}
		if raw.IsResponse() {
			if len(eager.ExtFields) > 0 && raw.rawExt == nil {
				t.Fatal("an answer decoded into a map with RawAnswers")
			}
			checkDecodeCommand(t, raw, eager.ExtFields,
				[2]any{&SendMessageResponseHeader{}, &SendMessageResponseHeader{}},
				[2]any{&PullMessageResponseHeader{}, &PullMessageResponseHeader{}})
			if !mapsEqual(raw.Fields(), eager.ExtFields) {
				t.Fatalf("raw answer Fields() = %v, map decode %v", raw.ExtFields, eager.ExtFields)
			}
		}
		for k, v := range eager.ExtFields {
			if got := lazy.Ext(k); got != v {
				t.Fatalf("Ext(%q) = %q, map has %q", k, got, v)
			}
		}
		ranged := map[string]string{}
		lazy.RangeExt(func(k, v string) bool { ranged[k] = v; return true })
		if !mapsEqual(ranged, eager.ExtFields) {
			t.Fatalf("RangeExt gave %v, map decode %v", ranged, eager.ExtFields)
		}
		rangedBytes := map[string]string{}
		lazy.RangeExtBytes(func(k, v []byte) bool { rangedBytes[string(k)] = string(v); return true })
		if !mapsEqual(rangedBytes, eager.ExtFields) {
			t.Fatalf("RangeExtBytes gave %v, map decode %v", rangedBytes, eager.ExtFields)
		}
		if lazy.Ext("\x00absent") != "" {
			t.Fatal("Ext of an absent key")
		}
		code := lazy.Code
		var strs Strings // shared by the decodes, as by a run's
		for _, c := range []int16{ReqSendMessage, ReqSendMessageV2, ReqSendBatchMessage, code} {
			lazy.Code = c
			got, err := DecodeSendMessageCommand(lazy)
			want, werr := DecodeSendMessageHeader(c, eager.ExtFields)
			if got != want || errString(err) != errString(werr) {
				t.Fatalf("send %d: %+v %v, map decode %+v %v", c, got, err, want, werr)
			}
			for range 2 {
				if got, err := DecodeSendMessageCommandWith(lazy, &strs); got != want || errString(err) != errString(werr) {
					t.Fatalf("send %d with Strings: %+v %v, map decode %+v %v", c, got, err, want, werr)
				}
			}
		}
		lazy.Code = code
		checkDecodeCommand(t, lazy, eager.ExtFields,
			[2]any{&PullMessageRequestHeader{}, &PullMessageRequestHeader{}},
			[2]any{&QueryConsumerOffsetRequestHeader{}, &QueryConsumerOffsetRequestHeader{}},
			[2]any{&UpdateConsumerOffsetRequestHeader{}, &UpdateConsumerOffsetRequestHeader{}})
		if lazy.ExtFields != nil && lazy.rawExt != nil {
			t.Fatal("a read built the map")
		}
		if !mapsEqual(lazy.Fields(), eager.ExtFields) {
			t.Fatalf("Fields() = %v, map decode %v", lazy.ExtFields, eager.ExtFields)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestStringsReused: the sends of a run decoded with one Strings share the
// strings of the values they repeat (the group, the topic), and get their
// own for the rest (the properties); a value past maxRecentString is never
// kept.
func TestStringsReused(t *testing.T) {
	frame := func(topic, props string) *Command {
		req := &Command{Code: ReqSendMessageV2, SerializeType: SerializeRocketMQ,
			ExtFields: SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
				QueueID: 1, BornTimestamp: 1, Properties: props}.EncodeV2()}
		return roundTrip(t, req)
	}
	var strs Strings
	long := strings.Repeat("t", maxRecentString+1)
	decode := func(topic, props string) SendMessageRequestHeader {
		h, err := DecodeSendMessageCommandWith(frame(topic, props), &strs)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a, b := decode("orders", "P\x01a\x02"), decode("orders", "P\x01a\x02")
	c, d := decode(long, "P\x01a\x02"), decode(long, "P\x01a\x02")
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if b.Topic != "orders" || !same(a.Topic, b.Topic) || !same(a.ProducerGroup, d.ProducerGroup) {
		t.Fatalf("repeated values were not shared: %q %q", a.Topic, b.Topic)
	}
	if c.Topic != long || same(c.Topic, d.Topic) || same(a.Properties, b.Properties) || b.Properties != "P\x01a\x02" {
		t.Fatalf("values were shared that should not be: %q", c.Topic)
	}
}

// TestRawFieldsGet: a raw table reads every key as its last value, as the
// map does, whether the key is one letter (indexed) or longer (scanned),
// in the fixed array or past it, and past the 255 fields the letter index
// covers.
func TestRawFieldsGet(t *testing.T) {
	for _, n := range []int{0, 1, 14, 24, 25, 254, 255, 256, 300} {
		var tab rawFields
		want := map[string]string{}
		keys := []string{"a", "b", "n", "z", "", "topic", "A", "{", "ab"}
		for i := range n {
			k := keys[(i*7)%len(keys)]
			v := strconv.Itoa(i)
			tab.add([]byte(k), []byte(v))
			want[k] = v
		}
		for _, k := range append(keys, "c", "queueId") {
			got, ok := tab.get(k)
			w, wok := want[k]
			if ok != wok || string(got) != w {
				t.Errorf("%d fields: get(%q) = %q %v, want %q %v", n, k, got, ok, w, wok)
			}
		}
	}
	// A letter first seen in the index's range and again past it.
	var tab rawFields
	tab.add([]byte("g"), []byte("first"))
	for range 300 {
		tab.add([]byte("x1"), []byte("-"))
	}
	tab.add([]byte("g"), []byte("last"))
	if got, ok := tab.get("g"); !ok || string(got) != "last" {
		t.Errorf("get(g) past the index = %q %v, want last", got, ok)
	}
}
