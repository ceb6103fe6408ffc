package store

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
)

// BenchmarkAppendDuringRetention measures single-message append latency
// (1 KiB bodies, 4 writers) while a retention pass deletes a 32 MiB head of
// the log (log, queue and index entries), beside the same appends without
// retention. Each iteration prefills a fresh store (untimed); the "on"
// side records only appends made while Retain ran. Reported: p50, p99 and
// max latency in µs and, for "on", how long the retention pass took.
func BenchmarkAppendDuringRetention(b *testing.B) {
	const prefill = 32 << 20
	for _, mode := range []FlushMode{AsyncFlush, SyncFlush} {
		for _, retain := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/retention=%v", mode, map[bool]string{false: "off", true: "on"}[retain]), func(b *testing.B) {
				var lat []time.Duration
				var retainTime time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					clock := fakeclock.New(t0)
					opts := DefaultOptions(b.TempDir())
					opts.FlushMode = mode
					opts.RetentionInterval = -1
					opts.FileReservedTime = time.Hour
					opts.Now = clock.Now
					s, err := Open(opts)
					if err != nil {
						b.Fatal(err)
					}
					batch := make([]*message.MessageExt, 64)
					for j := range batch {
						batch[j] = benchMsg(int32(j % 4))
					}
					for s.MaxPhysOffset() < prefill {
						if _, err := s.Put(batch); err != nil {
							b.Fatal(err)
						}
					}
					clock.Set(t0.Add(2 * time.Hour)) // new appends are young
					b.StartTimer()

					var stop atomic.Bool
					var mu sync.Mutex
					var wg sync.WaitGroup
					for w := 0; w < 4; w++ {
						wg.Add(1)
						go func(w int) {
							defer wg.Done()
							m := []*message.MessageExt{benchMsg(int32(w))}
							var mine []time.Duration
							for n := 0; !stop.Load() && (retain || n < 1000); n++ {
								t := time.Now()
								if _, err := s.Put(m); err != nil {
									b.Error(err)
									return
								}
								mine = append(mine, time.Since(t))
							}
							mu.Lock()
							lat = append(lat, mine...)
							mu.Unlock()
						}(w)
					}
					if retain {
						t := time.Now()
						n, err := s.Retain(t0.Add(time.Hour + time.Minute))
						retainTime += time.Since(t)
						if err != nil || n < prefill {
							b.Errorf("retain deleted %d bytes: %v", n, err)
						}
						stop.Store(true)
					}
					wg.Wait()
					b.StopTimer()
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				slices.Sort(lat)
				pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
				b.ReportMetric(pct(0.5), "p50-µs")
				b.ReportMetric(pct(0.99), "p99-µs")
				b.ReportMetric(pct(1), "max-µs")
				b.ReportMetric(float64(len(lat))/float64(b.N), "appends/op")
				if retain {
					b.ReportMetric(float64(retainTime.Milliseconds())/float64(b.N), "retain-ms")
				}
			})
		}
	}
}
