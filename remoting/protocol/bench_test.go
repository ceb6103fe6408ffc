package protocol

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/runnelmq/runnel/message"
)

// benchCommands are typical hot-path requests: a push consumer's pull and a
// producer's send, with headers as the official client fills them.
func benchCommands() map[string]*Command {
	pull := &Command{Code: ReqPullMessage, Language: "GO", Version: 317, Opaque: 27, ExtFields: PullMessageRequestHeader{
		ConsumerGroup: "g-orderly", Topic: "T2", QueueID: 0, QueueOffset: 5, MaxMsgNums: 32, SysFlag: 3,
		CommitOffset: 5, SuspendTimeoutMillis: 20000, SubVersion: 0, ExpressionType: "TAG", BrokerName: "b1",
	}.Encode()}
	send := &Command{Code: ReqSendMessage, Language: "GO", Version: 317, Opaque: 28, ExtFields: SendMessageRequestHeader{
		ProducerGroup: "pg1", Topic: "T1", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, QueueID: 3,
		BornTimestamp: 1764403200000, Properties: "KEYS\x01k1\x02TAGS\x01TagA\x02UNIQ_KEY\x01C0A80001518A18B4AAC27A5C3B520000\x02WAIT\x01true\x02",
		MaxReconsumeTimes: 16, BrokerName: "b1",
	}.Encode(), Body: make([]byte, 1024)}
	// What our producer sends with ACL: SEND_MESSAGE_V2 signed.
	sendV2 := *send
	sendV2.Code, sendV2.ExtFields = ReqSendMessageV2, SendMessageRequestHeader{
		ProducerGroup: "pg1", Topic: "T1", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, QueueID: 3,
		BornTimestamp: 1764403200000, Properties: "KEYS\x01k1\x02TAGS\x01TagA\x02UNIQ_KEY\x01C0A80001518A18B4AAC27A5C3B520000\x02WAIT\x01true\x02",
		MaxReconsumeTimes: 16, BrokerName: "b1",
	}.EncodeV2()
	sendV2.MoreExt = []Field{{"AccessKey", "RocketMQ"}, {"Signature", "QwJ9Yx2uL1Hcb0AeZp3xXlWm8Ks="}}
	resp := NewResponse(pull, RespPullNotFound, "")
	resp.ExtFields = PullMessageResponseHeader{NextBeginOffset: 5, MinOffset: 0, MaxOffset: 5}.Encode()
	return map[string]*Command{"pull": pull, "send": send, "sendV2Signed": &sendV2, "pullResponse": resp}
}

func BenchmarkEncodeFrame(b *testing.B) {
	for name, c := range benchCommands() {
		for _, st := range []byte{SerializeJSON, SerializeRocketMQ} {
			cc := *c
			cc.SerializeType = st
			b.Run(name+serName(st), func(b *testing.B) {
				buf := make([]byte, 0, 4096)
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if buf, err = AppendFrame(buf[:0], &cc); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(len(buf)))
			})
		}
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	benchEachFrame(b, benchCommands(), func(b *testing.B, frame []byte) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			if _, err := DecodeFrame(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchEachFrame runs bench as a sub-benchmark for each command encoded
// in each header encoding, with the frame it encodes to (length prefix
// left off, as DecodeFrame takes it).
func benchEachFrame(b *testing.B, cmds map[string]*Command, bench func(b *testing.B, frame []byte)) {
	for name, frame := range encodedFrames(b, cmds) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			bench(b, frame)
		})
	}
}

// BenchmarkDecodeJSONHeaderStdlib is the baseline the hand-written decoder
// replaced: encoding/json into a struct with a string map.
func BenchmarkDecodeJSONHeaderStdlib(b *testing.B) {
	type stdHeader struct {
		Code      int16             `json:"code"`
		Language  string            `json:"language"`
		Version   int16             `json:"version"`
		Opaque    int32             `json:"opaque"`
		Flag      int32             `json:"flag"`
		Remark    string            `json:"remark"`
		ExtFields map[string]string `json:"extFields"`
	}
	for name, c := range benchCommands() {
		hdr := appendJSONHeader(nil, c)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(hdr)))
			for b.Loop() {
				var h stdHeader
				if err := json.Unmarshal(hdr, &h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTypedHeaders(b *testing.B) {
	ext := benchCommands()["pull"].ExtFields
	b.Run("pullDecode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var h PullMessageRequestHeader
			if err := h.Decode(ext); err != nil {
				b.Fatal(err)
			}
		}
	})
	h := PullMessageResponseHeader{NextBeginOffset: 5, MaxOffset: 5}
	b.Run("pullResponseEncode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = h.Encode()
		}
	})
}

func serName(st byte) string {
	if st == SerializeRocketMQ {
		return "/rocketmq"
	}
	return "/json"
}

// BenchmarkMessageIDs covers the ids made per message: OffsetMsgID for every
// stored and every decoded message, NewUniqID for every one sent.
func BenchmarkMessageIDs(b *testing.B) {
	host := netip.MustParseAddrPort("192.0.2.4:10911")
	b.Run("OffsetMsgID", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			_ = message.OffsetMsgID(host, int64(i))
		}
	})
	b.Run("NewUniqID", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = message.NewUniqID()
		}
	})
}
