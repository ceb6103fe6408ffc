//go:build !race

// These tests drive the official client's consumers, which report data races
// inside themselves under -race (their rebalance against their own offset
// store and pull paths). They run in the test command's race-free pass, so a
// race of theirs cannot fail CI for a reason that is not ours.

package integration

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

// BenchmarkOfficialClientDeliveryLatency measures, with the official Go
// producer and push consumer, how long a message sent to an idle topic
// (the consumer's pull held by the broker) takes from the start of
// SendSync to the consumer's callback. p50/p99 in microseconds.
func BenchmarkOfficialClientDeliveryLatency(b *testing.B) {
	c := cluster.Start(b)
	createTopic(b, c, 0, "Latency", 1)
	p := newProducer(b, c)
	arrived := make(chan time.Time, 1)
	newPushConsumer(b, c, "g-latency", "Latency", "*", func(*primitive.MessageExt) { arrived <- time.Now() })
	// Warm up: the first message also waits for the rebalance.
	if _, err := p.SendSync(context.Background(), primitive.NewMessage("Latency", []byte("warm"))); err != nil {
		b.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		b.Fatal("warm-up message not delivered")
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		time.Sleep(2 * time.Millisecond) // let the consumer's next pull be held
		b.StartTimer()
		start := time.Now()
		if _, err := p.SendSync(context.Background(), primitive.NewMessage("Latency", []byte(strconv.Itoa(i)))); err != nil {
			b.Fatal(err)
		}
		select {
		case end := <-arrived:
			lat = append(lat, end.Sub(start))
		case <-time.After(10 * time.Second):
			b.Fatal("message not delivered")
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
