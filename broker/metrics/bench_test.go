package metrics_test

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/internal/interleave"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// BenchmarkSendMetrics measures send throughput (SEND_MESSAGE_V2, 1 KiB,
// 4 senders per core) with the exporter off and on; compare the two
// ns/op (the goal is on >= 0.97x off in throughput). With "on", every
// send goes through the metrics interceptor and /metrics is served.
// cpu-ns/op is the process's CPU time (client and broker, user and
// system) per send: on a machine shared with other work it is the steadier
// figure, since wall time then measures the neighbours too.
func BenchmarkSendMetrics(b *testing.B) {
	for _, c := range []struct {
		name string
		typ  string
	}{{"off", metrics.ExporterDisable}, {"on", metrics.ExporterProm}} {
		b.Run(c.name, func(b *testing.B) {
			br := startBroker(b, func(cfg *config.Config) { cfg.Metrics.ExporterType = c.typ })
			rc := newRawClient(b, br.Addr())
			rc.createTopic("BENCH", 4)
			body := make([]byte, 1024)
			hdr := sendHeader("BENCH", nil).EncodeV2()
			b.SetBytes(int64(len(body)))
			b.SetParallelism(4)
			b.ResetTimer()
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := rc.cl.Invoke(context.Background(), br.Addr(), protocol.NewRequest(protocol.ReqSendMessageV2, hdr, body))
					if err != nil || resp.Code != protocol.RespSuccess {
						b.Errorf("send: %v %v", resp, err)
						return
					}
				}
			})
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSendMetricsSideBySide runs the sends of BenchmarkSendMetrics
// against two brokers in one process, metrics off and on, in alternating
// slices of 200 sends (internal/interleave), so a loaded machine's
// changing load lands on both alike. on/off is the throughput of "on" over
// "off" over the whole run (the goal is >= 0.97); slice-median the median
// of the slices' ratios. b.N is the number of sends to each broker:
//
//	go test -run '^$' -bench SendMetricsSideBySide -benchtime 40000x ./broker/metrics
func BenchmarkSendMetricsSideBySide(b *testing.B) {
	body := make([]byte, 1024)
	var sends []func() error
	for _, typ := range []string{metrics.ExporterDisable, metrics.ExporterProm} {
		br := startBroker(b, func(cfg *config.Config) { cfg.Metrics.ExporterType = typ })
		rc := newRawClient(b, br.Addr())
		rc.createTopic("BENCH", 4)
		hdr := sendHeader("BENCH", nil).EncodeV2()
		sends = append(sends, func() error {
			resp, err := rc.cl.Invoke(context.Background(), br.Addr(), protocol.NewRequest(protocol.ReqSendMessageV2, hdr, body))
			if err == nil && resp.Code != protocol.RespSuccess {
				err = fmt.Errorf("send answered %s", protocol.ResponseCodeName(resp.Code))
			}
			return err
		})
	}
	for _, send := range sends { // connections and series warm
		if err := send(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	res, err := interleave.Run(b.N, 200, 4*runtime.GOMAXPROCS(0), sends)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(res.Ratio(1), "on/off")
	b.ReportMetric(res.MedianRatio(1), "slice-median")
}
