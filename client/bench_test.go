package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
)

// BenchmarkEndToEnd measures produce-and-consume throughput with this
// client: b.N 256-byte messages sent synchronously by 8 goroutines (one
// message per send, or batches of 32) to a topic of 8 queues, consumed by
// one clustering push consumer; the clock stops when the last message is
// consumed. Run it short:
//
//	go test -run ^$ -bench EndToEnd -benchtime 2000x ./client/
//
// runnel-std is the cluster on the standard library's transport, which in
// one process with its clients measured faster than netpoll
// (docs/performance-history.md, session 17). Run each alone (-bench
// 'EndToEnd/^runnel$' and 'EndToEnd/^runnel-std$'): a netpoll server's
// start adds a P to the process (remoting.addPollerProcs).
func BenchmarkEndToEnd(b *testing.B) {
	for _, v := range []struct {
		name string
		opts []cluster.Option
	}{
		{"runnel", nil},
		{"runnel-std", []cluster.Option{
			cluster.ConfigureNamesrv(func(cfg *namesrv.Config) { cfg.Transport = remoting.TransportStd }),
			cluster.Configure(func(_ int, cfg *config.Config) { cfg.Transport = remoting.TransportStd }),
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			c := startCluster(b, v.opts...)
			be := &backend{ns: c.NamesrvAddr(), brokers: []string{c.BrokerAddr(0)}}
			b.Run("single", func(b *testing.B) { benchEndToEnd(b, be, 1) })
			b.Run("batch32", func(b *testing.B) { benchEndToEnd(b, be, 32) })
		})
	}
}

func benchEndToEnd(b *testing.B, be *backend, batch int) {
	// A fresh topic per run: the consumer must see this run's messages only.
	topic := fmt.Sprintf("Bench%d", instanceSeq.Add(1))
	be.createTopic(b, topic, 8)
	var consumed atomic.Int64
	done := make(chan struct{})
	target := int64(b.N)
	cons := newConsumer(b, be.ns, fmt.Sprintf("bench-%d", instanceSeq.Add(1)), func(cfg *PushConsumerConfig) {
		cfg.ConsumeBatchSize = 32
		cfg.Concurrently = func(_ context.Context, msgs []*MessageExt) ConsumeResult {
			if consumed.Add(int64(len(msgs))) >= target {
				select {
				case <-done:
				default:
					close(done)
				}
			}
			return ConsumeSuccess
		}
	})
	startConsumer(b, cons, topic, "*")
	p := startProducer(b, be.ns, nil)
	payload := make([]byte, 256)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				last := next.Add(int64(batch))
				n := min(int64(batch), target-(last-int64(batch)))
				if n <= 0 {
					return
				}
				msgs := make([]*Message, n)
				for i := range msgs {
					msgs[i] = &Message{Topic: topic, Body: payload}
				}
				if _, err := p.Send(context.Background(), msgs...); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sent := time.Since(start)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		b.Fatalf("consumed %d of %d", consumed.Load(), target)
	}
	b.StopTimer()
	total := time.Since(start)
	b.ReportMetric(float64(b.N)/sent.Seconds(), "sent/s")
	b.ReportMetric(float64(b.N)/total.Seconds(), "e2e-msgs/s")
}
