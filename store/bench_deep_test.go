package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/message"
)

// BenchmarkHeadPull compares pulls at the head of a queue holding 1,000
// messages with the same in a queue holding RUNNEL_BENCH_DEEP (default
// 1,000,000; the goal is 100,000,000): both should cost the same,
// in time (ns/op) and in CPU (cpu-ns/op, the process's user and system time
// per op). "restart" pulls the newest 32 stored messages of a store just
// opened (everything on disk, as after a broker restart); "live" appends 32
// messages and pulls them where the previous pull ended, as a consumer that
// keeps up does (the op is the append and the pull). The queues are filled
// through Put in batches of 1,000 messages with 16-byte bodies. With
// RUNNEL_BENCH_DEEP_DIR the deep store is kept under that directory and
// reused by later runs (a 100M fill takes about ten minutes here; the live
// runs add to it); the shallow one is always new.
//
//	RUNNEL_BENCH_DEEP=100000000 RUNNEL_BENCH_DEEP_DIR=/var/tmp/deep go test -run '^$' -bench HeadPull -timeout 0 ./store
func BenchmarkHeadPull(b *testing.B) {
	deep := 1_000_000
	if v := os.Getenv("RUNNEL_BENCH_DEEP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("RUNNEL_BENCH_DEEP=%q: want a count >= 1000", v)
		}
		deep = n
	}
	const perPull = 32
	for _, depth := range []int{1000, deep} {
		s := deepStore(b, depth, depth > 1000)
		b.Run(fmt.Sprintf("restart/depth=%d", depth), func(b *testing.B) {
			head := s.queue(deepTopic, 0).readable.Load() - perPull
			cpu0 := processCPU(b)
			b.ResetTimer()
			for range b.N {
				r, err := s.Get(deepTopic, 0, head, perPull, 1<<20, nil)
				if err != nil || r.Count != perPull {
					b.Fatalf("Get at %d: %v, %d messages, %v", head, err, r.Count, r.Status)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
		b.Run(fmt.Sprintf("live/depth=%d", depth), func(b *testing.B) {
			batch := make([]*message.MessageExt, perPull)
			for i := range batch {
				batch[i] = msg(deepTopic, 0, "0123456789abcdef")
			}
			next := s.queue(deepTopic, 0).readable.Load()
			// Only the pull is timed; its CPU is its thread's, so the
			// append's background work (Pebble's WAL writer) is left out.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if _, err := s.Put(batch); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := threadCPU(b)
				r, err := s.Get(deepTopic, 0, next, perPull, 1<<20, nil)
				cpu += threadCPU(b) - t0
				if err != nil || r.Count != perPull {
					b.Fatalf("Get at %d: %v, %d messages, %v", next, err, r.Count, r.Status)
				}
				next = r.NextBeginOffset
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

const deepTopic = "Deep"

// deepStore opens a store whose queue 0 of deepTopic holds depth messages
// (or a few more, from earlier live runs), filling it unless it is to be
// kept and RUNNEL_BENCH_DEEP_DIR holds one already. It is closed and opened
// again, so what the fill left in memory is on disk, as after a restart.
func deepStore(b *testing.B, depth int, keep bool) *Store {
	dir := filepath.Join(b.TempDir(), "deep")
	if root := os.Getenv("RUNNEL_BENCH_DEEP_DIR"); root != "" && keep {
		dir = filepath.Join(root, fmt.Sprintf("depth-%d", depth))
	}
	opts := DefaultOptions(dir)
	opts.FlushMode = AsyncFlush
	opts.RetentionInterval = -1
	s, err := Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	have := int64(0)
	if q := s.queue(deepTopic, 0); q != nil {
		have = q.readable.Load()
	}
	const perPut = 1000
	batch := make([]*message.MessageExt, perPut)
	for i := range batch {
		batch[i] = msg(deepTopic, 0, "0123456789abcdef")
	}
	start := time.Now()
	for have < int64(depth) {
		n := min(perPut, depth-int(have))
		if _, err := s.Put(batch[:n]); err != nil {
			b.Fatal(err)
		}
		have += int64(n)
		if have%10_000_000 == 0 {
			b.Logf("filled %d of %d in %v", have, depth, time.Since(start).Round(time.Second))
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = Open(opts); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	settle(s)
	return s
}

// settle waits until Pebble's background work is done (after a fill its
// compactions, after an open its loading of every table's statistics), so
// that cpu-ns/op counts the pulls alone.
func settle(s *Store) {
	for _, db := range []*pebble.DB{s.log, s.db} {
		for {
			m := db.Metrics()
			if m.Table.InitialStatsCollectionComplete && m.Table.PendingStatsCollectionCount == 0 && m.Compact.NumInProgress == 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// threadCPU is the calling thread's CPU time so far (getrusage's thread
// figure advances only at scheduler ticks).
func threadCPU(b *testing.B) time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		b.Fatal(e)
	}
	return time.Duration(ts.Nano())
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
