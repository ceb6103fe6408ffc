package metrics

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// BenchmarkObserveSend is what the exporter adds to each stored send and
// to each pull answered with messages: the interceptor's work alone, to
// set beside a send's round trip (BenchmarkSendMetrics) where the
// difference drowns in noise on a loaded machine.
func BenchmarkObserveSend(b *testing.B) {
	m := New(Config{ExporterType: ExporterProm}, Deps{Cluster: "c", Node: "n"})
	req := protocol.NewRequest(protocol.ReqSendMessageV2, protocol.SendMessageRequestHeader{
		ProducerGroup: "pg", Topic: "BENCH", DefaultTopic: protocol.DefaultTopicKey, DefaultTopicQueueNums: 4,
		Properties: message.MarshalProperties(map[string]string{"UNIQ_KEY": "0A0B0C0D00002A9F0000000000000001", "WAIT": "true"}),
	}.EncodeV2(), make([]byte, 1024))
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.observe(nil, req, resp, 200*time.Microsecond)
		}
	})
}

func BenchmarkObservePull(b *testing.B) {
	m := New(Config{ExporterType: ExporterProm}, Deps{Cluster: "c", Node: "n"})
	req := protocol.NewRequest(protocol.ReqPullMessage, protocol.PullMessageRequestHeader{
		ConsumerGroup: "cg", Topic: "BENCH", QueueID: 1, QueueOffset: 0, MaxMsgNums: 32, SysFlag: protocol.PullFlagSuspend,
	}.Encode(), nil)
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.PullMessageResponseHeader{NextBeginOffset: 32}.Encode()
	// 32 records of 200 bytes, each led by its total size.
	for range 32 {
		rec := make([]byte, 200)
		rec[2], rec[3] = 0, 200
		resp.Body = append(resp.Body, rec...)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.observe(nil, req, resp, 200*time.Microsecond)
		}
	})
}
