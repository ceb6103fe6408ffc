package store

import (
	"fmt"
	"math/rand/v2"
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

// BenchmarkRetentionCompaction measures what retention of half a 64 MiB
// log (incompressible 64 KiB bodies, appended an hour apart so that the
// older half expires) costs Pebble: the log's table bytes 200 ms after
// Retain returns, with no append meanwhile (what it freed by itself), and
// the bytes Pebble compacted and the peak of the log's table bytes while
// 16 MiB more (two memtables) is appended and Pebble settles, and the
// table bytes then. Run with -benchtime=1x; the
// settling is polled, so the time per op means nothing.
func BenchmarkRetentionCompaction(b *testing.B) {
	const half, size = 32 << 20, 64 << 10
	for i := 0; i < b.N; i++ {
		clock := fakeclock.New(t0)
		opts := DefaultOptions(b.TempDir())
		opts.RetentionInterval, opts.DiskCheckInterval = -1, -1
		opts.FileReservedTime = time.Hour
		opts.Now = clock.Now
		s, err := Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.NewChaCha8([32]byte{byte(i)})
		put := func(n int64) {
			for end := s.MaxPhysOffset() + n; s.MaxPhysOffset() < end; {
				m := benchMsg(0)
				m.Body = make([]byte, size)
				_, _ = rng.Read(m.Body)
				if _, err := s.Put([]*message.MessageExt{m}); err != nil {
					b.Fatal(err)
				}
			}
		}
		put(half)
		clock.Set(t0.Add(2 * time.Hour))
		put(half)
		if err := s.log.Flush(); err != nil {
			b.Fatal(err)
		}
		// The table files (Pebble's Table.Local metrics lag behind them).
		tables := func() int64 { return logTableBytes(b, s) }
		compacted := func() (n uint64) {
			for _, l := range s.log.Metrics().Levels {
				n += l.TableBytesCompacted
			}
			return n
		}
		quiesceLog(s, func() {})
		before, c0 := tables(), compacted()
		if _, err := s.Retain(t0.Add(time.Hour + time.Minute)); err != nil {
			b.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		after := tables()
		peak := before
		done := make(chan struct{})
		go func() {
			defer close(done)
			put(16 << 20)
		}()
		for running := true; running; {
			select {
			case <-done:
				running = false
			case <-time.After(10 * time.Millisecond):
			}
			peak = max(peak, tables())
		}
		quiesceLog(s, func() { peak = max(peak, tables()) })
		b.ReportMetric(float64(before)/(1<<20), "before-MiB")
		b.ReportMetric(float64(after)/(1<<20), "after-retain-MiB")
		b.ReportMetric(float64(compacted()-c0)/(1<<20), "compacted-MiB")
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		b.ReportMetric(float64(tables())/(1<<20), "end-MiB")
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// quiesceLog returns once the log's database has had no compaction
// running or started for 500 ms, calling poll every 10 ms meanwhile.
func quiesceLog(s *Store, poll func()) {
	for {
		m := s.log.Metrics()
		n, quiet := m.Compact.Count, m.Compact.NumInProgress == 0
		for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			poll()
			m = s.log.Metrics()
			quiet = quiet && m.Compact.NumInProgress == 0
		}
		if quiet && m.Compact.Count == n {
			return
		}
	}
}
