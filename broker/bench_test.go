package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// BenchmarkLongPollLatency measures how long a message sent to an idle
// topic takes to reach a consumer whose pull the broker holds: from the
// moment the producer starts its SEND_MESSAGE to the moment the held
// PULL_MESSAGE's answer (with the message) arrives, over loopback. It
// reports p50 and p99 in microseconds.
func BenchmarkLongPollLatency(b *testing.B) {
	br := startBroker(b, nil)
	consumer := newRawClient(b, br.Addr())
	producer := newRawClient(b, br.Addr())
	consumer.createTopic("Idle", 1)
	expect(b, consumer.heartbeat("bench-consumer", "bench", protocol.BuildSubscriptionData("Idle", "*")), protocol.RespSuccess, "")
	sendHdr := sendHeader("Idle", 0, nil).Encode()
	body := make([]byte, 128)

	lat := make([]time.Duration, 0, b.N)
	var offset int64
	b.ResetTimer()
	for range b.N {
		h := pullHeader("bench", "Idle", 0, offset, 32, protocol.PullFlagSuspend)
		got := make(chan time.Time, 1)
		var resp *protocol.Command
		err := consumer.cl.InvokeAsync(context.Background(), br.Addr(), protocol.NewRequest(protocol.ReqPullMessage, h.Encode(), nil),
			func(r *protocol.Command, err error) {
				resp = r
				got <- time.Now()
			})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for br.core.HeldPulls() == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		b.StartTimer()
		start := time.Now()
		if err := producer.cl.InvokeOneway(context.Background(), br.Addr(),
			protocol.NewRequest(protocol.ReqSendMessage, sendHdr, body)); err != nil {
			b.Fatal(err)
		}
		end := <-got
		if resp == nil || resp.Code != protocol.RespSuccess {
			b.Fatalf("pull answered %v", resp)
		}
		lat = append(lat, end.Sub(start))
		offset++
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkSendSync measures one SEND_MESSAGE round trip of a 1 KiB body.
func BenchmarkSendSync(b *testing.B) {
	br := startBroker(b, nil)
	rc := newRawClient(b, br.Addr())
	rc.createTopic("S", 4)
	hdr := sendHeader("S", 0, nil).Encode()
	body := make([]byte, 1024)
	req := protocol.NewRequest(protocol.ReqSendMessage, hdr, body)
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		resp, err := rc.cl.Invoke(context.Background(), br.Addr(), req)
		if err != nil || resp.Code != protocol.RespSuccess {
			b.Fatalf("%v %v", resp, err)
		}
	}
}
