package protocol

import (
	"errors"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

type extEncoderI interface{ Encode() map[string]string }
type extDecoderI interface {
	Decode(map[string]string) error
}

// allHeaders lists one zero value of every typed header.
func allHeaders() []any {
	return []any{
		&SendMessageRequestHeader{}, &SendMessageResponseHeader{},
		&PullMessageRequestHeader{}, &PullMessageResponseHeader{},
		&QueryConsumerOffsetRequestHeader{}, &QueryConsumerOffsetResponseHeader{},
		&UpdateConsumerOffsetRequestHeader{},
		&GetMaxOffsetRequestHeader{}, &GetMaxOffsetResponseHeader{},
		&GetMinOffsetRequestHeader{}, &GetMinOffsetResponseHeader{},
		&GetEarliestMsgStoretimeRequestHeader{}, &GetEarliestMsgStoretimeResponseHeader{},
		&SearchOffsetRequestHeader{}, &SearchOffsetResponseHeader{},
		&ConsumerSendMsgBackRequestHeader{}, &GetConsumerListByGroupRequestHeader{},
		&UnregisterClientRequestHeader{}, &EndTransactionRequestHeader{},
		&CheckTransactionStateRequestHeader{}, &NotifyConsumerIDsChangedRequestHeader{},
		&GetConsumerRunningInfoRequestHeader{}, &ResetOffsetRequestHeader{},
		&CreateTopicRequestHeader{}, &DeleteTopicRequestHeader{}, &GetTopicStatsInfoRequestHeader{},
		&ViewMessageRequestHeader{}, &QueryMessageRequestHeader{}, &QueryMessageResponseHeader{},
		&GetConsumeStatsRequestHeader{},
		&PopMessageRequestHeader{}, &PopMessageResponseHeader{}, &AckMessageRequestHeader{},
		&ChangeInvisibleTimeRequestHeader{}, &ChangeInvisibleTimeResponseHeader{},
		&NotificationRequestHeader{}, &NotificationResponseHeader{},
		&RecallMessageRequestHeader{}, &RecallMessageResponseHeader{},
	}
}

var sampleStrings = []string{"", "T", "%RETRY%g1", "ns%group", "ü中😀", "a\"b\\c", "x\x01y\x02", " spaced "}

// fillRandom sets every field of the struct v points at to a random value.
func fillRandom(r *rand.Rand, v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(sampleStrings[r.IntN(len(sampleStrings))])
		case reflect.Int32:
			vals := []int64{0, -1, 1, 4, 20000, 1<<31 - 1, -1 << 31, int64(r.Int32()) - 1<<30}
			f.SetInt(vals[r.IntN(len(vals))])
		case reflect.Int64:
			vals := []int64{0, -1, 42, 1 << 40, 1<<63 - 1, -1 << 63, r.Int64()}
			f.SetInt(vals[r.IntN(len(vals))])
		case reflect.Bool:
			f.SetBool(r.IntN(2) == 1)
		case reflect.Struct:
			fillRandom(r, f)
		}
	}
}

// TestHeaderRoundTrip is the property Decode(Encode(h)) == h for every
// header, over random values including extremes and odd strings.
func TestHeaderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, proto := range allHeaders() {
		typ := reflect.TypeOf(proto).Elem()
		t.Run(typ.Name(), func(t *testing.T) {
			for range 300 {
				h := reflect.New(typ)
				fillRandom(r, h.Elem())
				ext := h.Elem().Interface().(extEncoderI).Encode()
				got := reflect.New(typ)
				if err := got.Interface().(extDecoderI).Decode(ext); err != nil {
					t.Fatalf("%+v: Decode(Encode) = %v (ext %q)", h.Elem(), err, ext)
				}
				if !reflect.DeepEqual(h.Elem().Interface(), got.Elem().Interface()) {
					t.Fatalf("round trip\n got  %+v\n want %+v\n ext %q", got.Elem(), h.Elem(), ext)
				}
			}
		})
	}
	// The V2 short-key form of the send header, through the code dispatch.
	for range 300 {
		var h SendMessageRequestHeader
		fillRandom(r, reflect.ValueOf(&h).Elem())
		for _, code := range []int16{ReqSendMessageV2, ReqSendBatchMessage, ReqSendReplyMessageV2} {
			got, err := DecodeSendMessageHeader(code, h.EncodeV2())
			if err != nil || got != h {
				t.Fatalf("V2 %d: %+v %v, want %+v", code, got, err, h)
			}
		}
		for _, code := range []int16{ReqSendMessage, ReqSendReplyMessage} {
			got, err := DecodeSendMessageHeader(code, h.Encode())
			if err != nil || got != h {
				t.Fatalf("V1 %d: %+v %v, want %+v", code, got, err, h)
			}
		}
	}
}

// TestHeaderRequiredFields checks that every header rejects an empty ext
// naming a field, unless all its fields are optional.
func TestHeaderRequiredFields(t *testing.T) {
	for _, proto := range allHeaders() {
		err := reflect.New(reflect.TypeOf(proto).Elem()).Interface().(extDecoderI).Decode(nil)
		var he *HeaderError
		if !errors.As(err, &he) || !errors.Is(err, ErrMissingField) || he.Field == "" ||
			!strings.HasPrefix(err.Error(), "protocol: ") {
			t.Errorf("%T.Decode(nil) = %v", proto, err)
		}
	}
}

func TestHeaderErrors(t *testing.T) {
	send := SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4}
	ext := send.Encode()
	ext["queueId"] = "x"
	_, err := DecodeSendMessageHeader(ReqSendMessage, ext)
	if err == nil || err.Error() != `protocol: SEND_MESSAGE header: queueId: invalid integer "x"` {
		t.Errorf("err = %v", err)
	}
	if !errors.Is(err, ErrInvalidField) {
		t.Errorf("%v is not ErrInvalidField", err)
	}
	ext["queueId"] = "3000000000" // beyond int32
	if _, err := DecodeSendMessageHeader(ReqSendMessage, ext); !errors.Is(err, ErrInvalidField) {
		t.Errorf("overflow: %v", err)
	}
	delete(ext, "queueId")
	_, err = DecodeSendMessageHeader(ReqSendMessage, ext)
	if err == nil || err.Error() != "protocol: SEND_MESSAGE header: queueId: missing" {
		t.Errorf("err = %v", err)
	}
	v2 := send.EncodeV2()
	v2["e"] = " 1"
	_, err = DecodeSendMessageHeader(ReqSendBatchMessage, v2)
	if err == nil || err.Error() != `protocol: SEND_BATCH_MESSAGE header: e (queueId): invalid integer " 1"` {
		t.Errorf("err = %v", err)
	}
	// A V2 code carrying long keys is still read.
	got, err := DecodeSendMessageHeader(ReqSendMessageV2, send.Encode())
	if err != nil || got != send {
		t.Errorf("long keys under V2 code: %+v %v", got, err)
	}
	// A required string may be empty (Java checks only for null); unknown keys are ignored.
	var d DeleteTopicRequestHeader
	if err := d.Decode(map[string]string{"topic": "", "extra": "1"}); err != nil {
		t.Errorf("empty topic: %v", err)
	}
	// Booleans follow Boolean.parseBoolean.
	for v, want := range map[string]bool{"true": true, "TRUE": true, "True": true, "false": false, "yes": false, "": false, "1": false} {
		var h GetConsumerRunningInfoRequestHeader
		if err := h.Decode(map[string]string{"consumerGroup": "g", "clientId": "c", "jstackEnable": v}); err != nil || h.JstackEnable != want {
			t.Errorf("jstackEnable %q: %v %v", v, h.JstackEnable, err)
		}
	}
	// An empty optional number is its default, not an error.
	var rh ResetOffsetRequestHeader
	if err := rh.Decode(map[string]string{"topic": "t", "group": "g", "timestamp": "5", "queueId": ""}); err != nil || rh.QueueID != -1 || rh.Offset != -1 {
		t.Errorf("reset: %+v %v", rh, err)
	}
}

// TestEncodeMatchesOfficialKeys pins the extFields keys our encoders write
// to the keys the official client's encoders write (internal/request.go) for
// the same header, with every field set.
func TestEncodeMatchesOfficialKeys(t *testing.T) {
	tests := []struct {
		ext  map[string]string
		keys string
	}{
		{SendMessageRequestHeader{BrokerName: "b"}.Encode(),
			"batch bname bornTimestamp defaultTopic defaultTopicQueueNums flag maxReconsumeTimes producerGroup properties queueId reconsumeTimes sysFlag topic unitMode"},
		{SendMessageRequestHeader{BrokerName: "b"}.EncodeV2(), "a b c d e f g h i j k l m n"},
		{PullMessageRequestHeader{BrokerName: "b"}.Encode(),
			"bname commitOffset consumerGroup expressionType maxMsgNums queueId queueOffset subVersion subscription suspendTimeoutMillis sysFlag topic"},
		{ConsumerSendMsgBackRequestHeader{OriginMsgID: "m", OriginTopic: "t", BrokerName: "b", MaxReconsumeTimes: 16}.Encode(),
			"bname delayLevel group maxReconsumeTimes offset originMsgId originTopic unitMode"},
		{EndTransactionRequestHeader{TransactionID: "x", BrokerName: "b"}.Encode(),
			"bname commitLogOffset commitOrRollback fromTransactionCheck msgId producerGroup tranStateTableOffset transactionId"},
		{CheckTransactionStateRequestHeader{MsgID: "a", TransactionID: "b", OffsetMsgID: "c"}.Encode(),
			"commitLogOffset msgId offsetMsgId tranStateTableOffset transactionId"},
		{GetConsumerListByGroupRequestHeader{}.Encode(), "consumerGroup"},
		{GetMaxOffsetRequestHeader{QueueRequestHeader{BrokerName: "b"}}.Encode(), "bname queueId topic"},
		{QueryConsumerOffsetRequestHeader{BrokerName: "b"}.Encode(), "bname consumerGroup queueId topic"},
		{SearchOffsetRequestHeader{BrokerName: "b"}.Encode(), "bname queueId timestamp topic"},
		{UpdateConsumerOffsetRequestHeader{BrokerName: "b"}.Encode(), "bname commitOffset consumerGroup queueId topic"},
		{GetConsumerRunningInfoRequestHeader{}.Encode(), "clientId consumerGroup jstackEnable"},
		{QueryMessageRequestHeader{}.Encode(), "beginTimestamp endTimestamp key maxNum topic"},
		{ViewMessageRequestHeader{}.Encode(), "offset"},
		{CreateTopicRequestHeader{}.Encode(), "defaultTopic order perm readQueueNums topic topicFilterType topicSysFlag writeQueueNums"},
		{DeleteTopicRequestHeader{}.Encode(), "topic"},
		// Java 5.3's DefaultMQProducerImpl.recallMessage sets all four.
		{RecallMessageRequestHeader{ProducerGroup: "pg", BrokerName: "b"}.Encode(), "bname producerGroup recallHandle topic"},
	}
	for _, tt := range tests {
		keys := make([]string, 0, len(tt.ext))
		for k := range tt.ext {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if got := strings.Join(keys, " "); got != tt.keys {
			t.Errorf("keys %q\n want %q", got, tt.keys)
		}
	}
	// Values are formatted as the client formats them.
	ext := ConsumerSendMsgBackRequestHeader{Offset: -5, DelayLevel: -1, UnitMode: true, MaxReconsumeTimes: 16}.Encode()
	if ext["offset"] != "-5" || ext["delayLevel"] != "-1" || ext["unitMode"] != "true" || ext["maxReconsumeTimes"] != "16" {
		t.Errorf("formatting: %v", ext)
	}
}

func TestPullSysFlag(t *testing.T) {
	for bits := range 16 {
		c, s, sub, cf := bits&1 != 0, bits&2 != 0, bits&4 != 0, bits&8 != 0
		f := BuildPullSysFlag(c, s, sub, cf)
		if f != int32(bits) || PullHasCommitOffset(f) != c || PullHasSuspend(f) != s ||
			PullHasSubscription(f) != sub || PullHasClassFilter(f) != cf {
			t.Errorf("bits %d: flag %d", bits, f)
		}
		if PullHasCommitOffset(PullClearCommitOffset(f)) || PullClearCommitOffset(f)|PullFlagCommitOffset != f|PullFlagCommitOffset {
			t.Errorf("clear commit on %d", f)
		}
	}
	// The values the official consumers send (fact sheet 2.3.3).
	if BuildPullSysFlag(false, true, false, false) != 2 || BuildPullSysFlag(true, true, false, false) != 3 ||
		BuildPullSysFlag(false, true, true, false) != 6 {
		t.Error("push/pull consumer flags")
	}
}

// TestPullHeaderAppend pins the field list our client sends a pull's
// header as: sorted by key, Encode's fields, and decoded back to the header.
func TestPullHeaderAppend(t *testing.T) {
	h := PullMessageRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 2, QueueOffset: 99, MaxMsgNums: 32,
		SysFlag: 3, CommitOffset: 7, SuspendTimeoutMillis: 15000, Subscription: "a || b", SubVersion: 5,
		ExpressionType: "TAG", MaxMsgBytes: 4096, BrokerName: "b"}
	fs := h.Append(nil)
	if !slices.IsSortedFunc(fs, func(a, b Field) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("fields not sorted by key: %v", fs)
	}
	if len(fs) != pullFields || cap(fs) != pullFields {
		t.Fatalf("%d fields (cap %d), want %d", len(fs), cap(fs), pullFields)
	}
	m := h.Encode()
	if len(m) != len(fs) {
		t.Fatalf("map of %d, %d fields", len(m), len(fs))
	}
	for _, f := range fs {
		if m[f.Key] != f.Value {
			t.Fatalf("field %s=%q, map has %q", f.Key, f.Value, m[f.Key])
		}
	}
	var got PullMessageRequestHeader
	if err := got.Decode(m); err != nil || got != h {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, h)
	}
	// The optional fields stay out when unset, as the official client's.
	h.BrokerName, h.MaxMsgBytes = "", 0
	if fs := h.Append(nil); len(fs) != pullFields-2 {
		t.Fatalf("%d fields without bname and maxMsgBytes: %v", len(fs), fs)
	}
}

// TestSendHeaderAppendV2 pins the field list our client sends a send's
// header as: sorted by key (ACL's signer and the peer's verifier sort
// nothing then), and the same fields EncodeV2's map has.
func TestSendHeaderAppendV2(t *testing.T) {
	h := SendMessageRequestHeader{ProducerGroup: "PG", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 3, BornTimestamp: 1700000000000, Properties: "p", MaxReconsumeTimes: 16, Batch: true, BrokerName: "b"}
	fs := h.AppendV2(nil)
	if !slices.IsSortedFunc(fs, func(a, b Field) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("fields not sorted by key: %v", fs)
	}
	m := h.EncodeV2()
	if len(m) != len(fs) || len(fs) != sendV2Fields || cap(fs) != sendV2Fields {
		t.Fatalf("%d fields (cap %d), map of %d, want %d", len(fs), cap(fs), len(m), sendV2Fields)
	}
	for _, f := range fs {
		if m[f.Key] != f.Value {
			t.Fatalf("field %s=%q, map has %q", f.Key, f.Value, m[f.Key])
		}
	}
	got, err := DecodeSendMessageHeader(ReqSendMessageV2, m)
	if err != nil || got != h {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, h)
	}
}

// TestResponseHeadersAsFields: a send's and a pull's answers sent with
// their headers in MoreExt arrive, in either header encoding, as Encode's
// map would; Ext on the command being sent reads MoreExt over ExtFields.
func TestResponseHeadersAsFields(t *testing.T) {
	send := SendMessageResponseHeader{MsgID: "AB", QueueID: 3, QueueOffset: 77, TransactionID: "tx",
		BatchUniqID: "u", MsgRegion: "r", TraceOn: "true"}
	pull := PullMessageResponseHeader{SuggestWhichBrokerID: 1, NextBeginOffset: 10, MinOffset: 2, MaxOffset: 11}
	for _, ser := range []byte{SerializeJSON, SerializeRocketMQ} {
		req := NewRequest(ReqSendMessage, nil, nil)
		req.SerializeType = ser
		resp := NewResponse(req, RespSuccess, "")
		resp.MoreExt = send.Append(nil)
		got := roundTrip(t, resp)
		var gs SendMessageResponseHeader
		if err := gs.Decode(got.Fields()); err != nil || gs != send || !maps.Equal(got.Fields(), send.Encode()) {
			t.Fatalf("serialize %d: send answer %+v, %v; fields %v", ser, gs, err, got.Fields())
		}
		resp = NewResponse(req, RespSuccess, "")
		resp.MoreExt = pull.Append(nil)
		got = roundTrip(t, resp)
		var gp PullMessageResponseHeader
		if err := gp.Decode(got.Fields()); err != nil || gp != pull || !maps.Equal(got.Fields(), pull.Encode()) {
			t.Fatalf("serialize %d: pull answer %+v, %v; fields %v", ser, gp, err, got.Fields())
		}
	}
	c := &Command{ExtFields: map[string]string{"a": "map", "b": "map"}, MoreExt: []Field{{"a", "first"}, {"a", "last"}}}
	if c.Ext("a") != "last" || c.Ext("b") != "map" || c.Ext("c") != "" {
		t.Fatalf("Ext a=%q b=%q c=%q", c.Ext("a"), c.Ext("b"), c.Ext("c"))
	}
}
