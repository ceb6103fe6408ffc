package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Workload is what every system runs: Msgs bodies of Size bytes sent by
// Producers goroutines, each sending synchronously (one send waits for its
// answer before the next), then one consumer draining them all.
type Workload struct {
	Msgs      int
	Size      int
	Producers int
	// Timeout bounds each phase, so a system that loses messages fails the
	// run instead of hanging it.
	Timeout time.Duration
}

// Result is one run of one system.
type Result struct {
	System           string
	Produce, Consume phase
	Msgs             int
}

// phase is how long one phase of a run took and the CPU the whole process
// (server and client alike: they share it) spent in it.
type phase struct{ Wall, CPU time.Duration }

// mark is where a phase started.
type mark struct {
	at  time.Time
	cpu time.Duration
}

func startPhase() mark { return mark{at: time.Now(), cpu: processCPU()} }

// processCPU is the user and system CPU this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProduceRate and ConsumeRate are msg/s; ConsumeRate is 0 for a run that
// did not consume (Consume 0).
func (r Result) ProduceRate() float64 { return float64(r.Msgs) / r.Produce.Wall.Seconds() }
func (r Result) ConsumeRate() float64 {
	if r.Consume.Wall <= 0 {
		return 0
	}
	return float64(r.Msgs) / r.Consume.Wall.Seconds()
}

// ProduceCPU and ConsumeCPU are the process's CPU per message in µs.
func (r Result) ProduceCPU() float64 { return perMsg(r.Produce.CPU, r.Msgs) }
func (r Result) ConsumeCPU() float64 { return perMsg(r.Consume.CPU, r.Msgs) }

func perMsg(d time.Duration, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(n)
}

// System is a broker and its client, started fresh for each run.
type System interface {
	Name() string
	// Run starts the system in dir, runs w and stops it again.
	Run(ctx context.Context, dir string, w Workload) (Result, error)
}

// body returns an incompressible body of w.Size bytes.
func (w Workload) body() []byte {
	b := make([]byte, w.Size)
	_, _ = rand.Read(b)
	return b
}

// produce calls send w.Msgs times from w.Producers goroutines and returns
// the time from the first call to the last answer and the CPU spent. It
// stops at the first error.
func (w Workload) produce(ctx context.Context, send func(ctx context.Context) error) (phase, error) {
	return w.produceBatches(ctx, 1, func(ctx context.Context, _ int) error { return send(ctx) })
}

// produceBatches is produce for sends of up to batch messages each: send
// is told how many messages to send, so that w.Msgs are sent in all.
func (w Workload) produceBatches(ctx context.Context, batch int, send func(ctx context.Context, n int) error) (phase, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	var (
		left    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		err     error
	)
	left.Store(int64(w.Msgs))
	start := startPhase()
	for range w.Producers {
		wg.Go(func() {
			for ctx.Err() == nil {
				after := left.Add(-int64(batch))
				n := batch + int(min(after, 0))
				if n <= 0 {
					return
				}
				if e := send(ctx, n); e != nil {
					errOnce.Do(func() { err = e; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return phase{Wall: time.Since(start.at), CPU: processCPU() - start.cpu}, err
}

// counter counts deliveries and says when w.Msgs have arrived.
type counter struct {
	want int64
	n    atomic.Int64
	done chan struct{}
	last atomic.Int64 // unix ns of the want-th delivery
}

func newCounter(want int) *counter { return &counter{want: int64(want), done: make(chan struct{})} }

func (c *counter) add(n int) {
	if v := c.n.Add(int64(n)); v >= c.want && v-int64(n) < c.want {
		c.last.Store(time.Now().UnixNano())
		close(c.done)
	}
}

// wait returns the time from start to the want-th delivery and the CPU
// spent until it returns.
func (c *counter) wait(ctx context.Context, start mark, timeout time.Duration) (phase, error) {
	select {
	case <-c.done:
		return phase{Wall: time.Unix(0, c.last.Load()).Sub(start.at), CPU: processCPU() - start.cpu}, nil
	case <-time.After(timeout):
		return phase{}, fmt.Errorf("consumed %d of %d messages in %s", c.n.Load(), c.want, timeout)
	case <-ctx.Done():
		return phase{}, ctx.Err()
	}
}
