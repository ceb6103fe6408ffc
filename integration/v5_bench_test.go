package integration

import (
	"context"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/runnelmq/runnel/client"
)

// BenchmarkV5HeldReceiveLatency: how soon a receive held by the gRPC
// door is answered once a message arrives: from the send's answer (the
// message is stored by then) to the receive's status frame, over
// loopback plaintext. Reports p50 and p99 (the goal: p99 within 2 ms, as
// held pulls are answered).
func BenchmarkV5HeldReceiveLatency(b *testing.B) {
	c := startV5(b)
	createTopic(b, c, 0, "V5Held", 1)
	r := dialV5(b, c, 0, false)
	group := &v2.Resource{Name: "v5-held"}
	mq := &v2.MessageQueue{Topic: &v2.Resource{Name: "V5Held"}, Id: 0}
	core := c.Broker(0).Core()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := make(chan time.Time, 1)
		go func() {
			s, err := r.ReceiveMessage(r.ctx(b), &v2.ReceiveMessageRequest{Group: group, MessageQueue: mq, BatchSize: 1,
				InvisibleDuration: durationpb.New(time.Minute), LongPollingTimeout: durationpb.New(5 * time.Second)})
			if err != nil {
				got <- time.Time{}
				return
			}
			first := true
			for {
				resp, err := s.Recv()
				if err != nil {
					if err != io.EOF {
						got <- time.Time{}
					}
					return
				}
				if first {
					first = false
					if resp.GetStatus().GetCode() == v2.Code_OK {
						got <- time.Now()
					} else {
						got <- time.Time{}
					}
				}
			}
		}()
		for core.HeldPops() == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		resp, err := r.SendMessage(r.ctx(b), &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5Held", v2.MessageType_NORMAL, "x")}})
		sent := time.Now()
		if err != nil || resp.GetStatus().GetCode() != v2.Code_OK {
			b.Fatalf("send: %v %v", resp.GetStatus(), err)
		}
		at := <-got
		if at.IsZero() {
			b.Fatal("the held receive was not answered with the message")
		}
		lat = append(lat, max(at.Sub(sent), 0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkV5SendCPU: CPU per message sent one at a time, in one process
// with its client, through the gRPC door (the generated client, a 100
// byte body) and through the remoting door (our client, the same body).
// Both figures include the client's CPU; the broker's alone needs the
// broker in a process of its own (runnelctl bench). Reports cpu-µs/msg.
func BenchmarkV5SendCPU(b *testing.B) {
	body := strings.Repeat("x", 100)
	b.Run("grpc", func(b *testing.B) {
		c := startV5(b)
		createTopic(b, c, 0, "V5CPU", 4)
		r := dialV5(b, c, 0, false)
		ctx := r.ctx(b)
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			resp, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5CPU", v2.MessageType_NORMAL, body)}})
			if err != nil || resp.GetStatus().GetCode() != v2.Code_OK {
				b.Fatalf("send: %v %v", resp.GetStatus(), err)
			}
		}
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/msg")
	})
	b.Run("remoting", func(b *testing.B) {
		c := rcCluster(b)
		createTopic(b, c, 0, "V5CPU", 4)
		p := rcProducer(b, c)
		ctx := context.Background()
		b.ResetTimer()
		start := cpuTime()
		for i := 0; i < b.N; i++ {
			if _, err := p.Send(ctx, &client.Message{Topic: "V5CPU", Body: []byte(body)}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/msg")
	})
}
