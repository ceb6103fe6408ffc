package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
)

// BenchmarkHeadPull compares a pull at the head of a queue (the newest 32
// messages, where a consumer that keeps up reads) holding 1,000 messages
// with one holding RUNNEL_BENCH_DEEP (default 1,000,000; the goal is
// 100,000,000): both should cost the same, in time (ns/op) and in CPU
// (cpu-ns/op, the process's user+system time per pull). The queues are
// filled through Put in batches of 1,000 messages with 16-byte bodies.
// With RUNNEL_BENCH_DEEP_DIR the filled stores are kept under that
// directory and reused by later runs (a 100M fill takes many minutes);
// otherwise they live in the test's temporary directory.
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
	for _, depth := range []int{1000, deep} {
		s := deepStore(b, depth)
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			const perPull = 32
			head := int64(depth - perPull)
			cpu0 := processCPU(b)
			b.ResetTimer()
			for range b.N {
				r, err := s.Get(deepTopic, 0, head, perPull, 1<<20, nil)
				if err != nil || r.Count != perPull {
					b.Fatalf("Get at %d: %v, %d messages, %v", head, err, r.Count, r.Status)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b) - cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

const deepTopic = "Deep"

// deepStore opens a store whose queue 0 of deepTopic holds depth messages,
// filling it unless RUNNEL_BENCH_DEEP_DIR holds one already.
func deepStore(b *testing.B, depth int) *Store {
	dir := filepath.Join(b.TempDir(), "deep")
	if root := os.Getenv("RUNNEL_BENCH_DEEP_DIR"); root != "" {
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
	if have > int64(depth) {
		b.Fatalf("%s holds %d messages, more than %d", dir, have, depth)
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
	return s
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
