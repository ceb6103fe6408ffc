package due

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// BenchmarkStep measures delivering due delayed messages: read the
// schedule queue, restore, one append per BatchSize messages, one
// progress write per batch.
func BenchmarkStep(b *testing.B) {
	e := newEnv(b)
	l, _ := ParseLevels("1s")
	for i := range b.N {
		e.schedule(l, "T", 0, fmt.Sprint("body-", i), 1, fmt.Sprint("u", i))
	}
	s := e.service(opts{levels: l})
	e.clock.Advance(time.Second)
	b.ResetTimer()
	for {
		next, err := s.Step()
		if err != nil {
			b.Fatal(err)
		}
		if !next.Equal(e.clock.Now()) {
			break // read to the end
		}
	}
	b.StopTimer()
	if got := e.st.MaxOffset("T", 0); got != int64(b.N) {
		b.Fatalf("delivered %d of %d", got, b.N)
	}
}

// benchStore opens a store on disk, on the real clock.
func benchStore(b *testing.B) *store.Store {
	b.Helper()
	st, err := store.Open(store.Options{Dir: b.TempDir(), RetentionInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// benchService is the broker's shape over st: delay levels and timers.
func benchService(b *testing.B, st *store.Store, now func() time.Time, deliver func([]*message.MessageExt) error) (*Service, *QueueSource) {
	b.Helper()
	levels, _ := ParseLevels(DefaultLevels)
	timers := NewTimerSource(st, nil)
	s, err := New(Config{Store: st, Sources: []Source{NewDelaySource(st, levels, nil), timers}, Now: now, Deliver: deliver})
	if err != nil {
		b.Fatal(err)
	}
	return s, timers
}

// putTimers stores n timer messages for T queue 0, due(i) each, in
// batches, with the due time in the body.
func putTimers(b *testing.B, st *store.Store, n int, now time.Time, due func(i int) time.Time) {
	b.Helper()
	const batch = 1000
	msgs := make([]*message.MessageExt, 0, batch)
	for i := range n {
		at := due(i).UnixMilli()
		m := &message.MessageExt{Message: message.Message{Topic: "T", Body: []byte(strconv.FormatInt(at, 10)),
			Properties: map[string]string{message.PropertyTimerDeliverMS: strconv.FormatInt(at, 10)}}}
		if ok, err := TransformTimer(m, now, 30*24*time.Hour); !ok || err != nil {
			b.Fatalf("TransformTimer = %v, %v", ok, err)
		}
		msgs = append(msgs, m)
		if len(msgs) == batch || i == n-1 {
			if _, err := st.Put(msgs); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
}

// BenchmarkDueWithinOneSecond: 100,000 timers falling due within one
// second; reports the delivery lag (from due time until the delivering
// write returned) at p50, p99 and max. Run with -benchtime=1x.
func BenchmarkDueWithinOneSecond(b *testing.B) {
	const n = 100_000
	for range b.N {
		b.StopTimer()
		st := benchStore(b)
		// Stored on a clock shifted back, so every timer is still waiting
		// when the loop starts however long the setup took.
		setup := time.Now()
		t0 := setup.Add(time.Hour)
		putTimers(b, st, n, setup, func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second / n) })
		shift := t0.Add(-2 * time.Second).Sub(time.Now()) // time to index them first
		now := func() time.Time { return time.Now().Add(shift) }
		var mu sync.Mutex
		lags := make([]time.Duration, 0, n)
		finished := make(chan struct{})
		s, _ := benchService(b, st, now, func(ms []*message.MessageExt) error {
			if _, err := st.Put(ms); err != nil {
				return err
			}
			at := now()
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				due, _ := strconv.ParseInt(string(m.Body), 10, 64)
				lags = append(lags, at.Sub(time.UnixMilli(due)))
			}
			if len(lags) == n {
				close(finished)
			}
			return nil
		})
		b.StartTimer()
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		select {
		case <-finished:
		case <-time.After(5 * time.Minute):
			b.Fatal("not all timers delivered")
		}
		b.StopTimer()
		s.Close()
		slices.Sort(lags)
		b.ReportMetric(float64(lags[n/2].Microseconds())/1000, "p50-lag-ms")
		b.ReportMetric(float64(lags[n*99/100].Microseconds())/1000, "p99-lag-ms")
		b.ReportMetric(float64(lags[n-1].Microseconds())/1000, "max-lag-ms")
	}
}

// BenchmarkMillionWaiting: a million timers due a day ahead, indexed;
// reports the time to index them as on a restart, the process CPU time
// per second of wall time while the loop waits (near zero), and the heap
// bytes per waiting timer. Run with -benchtime=1x.
func BenchmarkMillionWaiting(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		b.StopTimer()
		st := benchStore(b)
		now := time.Now()
		putTimers(b, st, n, now, func(i int) time.Time { return now.Add(24*time.Hour + time.Duration(i)*time.Millisecond) })
		s, timers := benchService(b, st, nil, func([]*message.MessageExt) error { b.Fatal("delivered"); return nil })
		b.StartTimer()
		start := time.Now()
		for {
			next, err := s.Step()
			if err != nil {
				b.Fatal(err)
			}
			if next.After(time.Now().Add(time.Hour)) {
				break // indexed to the end: the next timer is a day ahead
			}
		}
		b.ReportMetric(time.Since(start).Seconds(), "index-s")
		if s.Waiting() != n {
			b.Fatalf("%d waiting", s.Waiting())
		}
		b.ReportMetric(float64(cap(s.idx)*int(unsafe.Sizeof(item{}))+cap(timers.lanes[0].p.offs)*8)/n, "index-B/timer")
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		const idle = 5 * time.Second
		before := cpuTime(b)
		time.Sleep(idle) // the measurement itself: CPU used while nothing falls due
		used := cpuTime(b) - before
		s.Close()
		b.StopTimer()
		b.ReportMetric(float64(used.Microseconds())/1000/idle.Seconds(), "idle-cpu-ms/s")
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
