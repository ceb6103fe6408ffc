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
	// Rate, if above 0, caps the sends at that many messages a second in
	// all: message i is sent no sooner than i/Rate seconds after the
	// first. Systems whose clients cost different CPU then put the same
	// load on their brokers, whose CPU per message falls as load rises
	// (more requests share each wake-up, store write and answer write).
	Rate float64
	// Timeout bounds each phase, so a system that loses messages fails the
	// run instead of hanging it.
	Timeout time.Duration
}

// Result is one run of one system.
type Result struct {
	System           string
	Produce, Consume phase
	Msgs             int
	// BrokerProcess says the broker ran in a process of its own (the
	// process topology): each phase's Broker is that process's CPU, and
	// its CPU this process's, the clients' alone.
	BrokerProcess bool
}

// phase is how long one phase of a run took and the CPU this process
// spent in it (server and client alike where they share it), and Broker
// the CPU of the broker's own process, where it has one.
type phase struct{ Wall, CPU, Broker time.Duration }

// mark is where a phase started.
type mark struct {
	at          time.Time
	cpu, broker time.Duration
	brokerCPU   cpuSource
}

// startPhase marks a phase's start; broker reads the broker's process's
// CPU (nil: the broker runs in this one).
func startPhase(broker cpuSource) mark {
	m := mark{at: time.Now(), cpu: processCPU(), brokerCPU: broker}
	if broker != nil {
		m.broker = broker()
	}
	return m
}

// end is the phase from m to now, its wall time given (the last delivery
// of a consume phase is earlier than the moment its wait returns).
func (m mark) end(wall time.Duration) phase {
	ph := phase{Wall: wall, CPU: processCPU() - m.cpu}
	if m.brokerCPU != nil {
		ph.Broker = m.brokerCPU() - m.broker
	}
	return ph
}

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

// ProduceCPU and ConsumeCPU are this process's CPU per message in µs.
func (r Result) ProduceCPU() float64 { return perMsg(r.Produce.CPU, r.Msgs) }
func (r Result) ConsumeCPU() float64 { return perMsg(r.Consume.CPU, r.Msgs) }

// BrokerProduceCPU and BrokerConsumeCPU are the broker process's CPU per
// message in µs (0 unless BrokerProcess); BrokerCPU is both together, the
// broker's CPU per message stored and delivered (stored only for a run
// that did not consume).
func (r Result) BrokerProduceCPU() float64 { return perMsg(r.Produce.Broker, r.Msgs) }
func (r Result) BrokerConsumeCPU() float64 { return perMsg(r.Consume.Broker, r.Msgs) }
func (r Result) BrokerCPU() float64        { return perMsg(r.Produce.Broker+r.Consume.Broker, r.Msgs) }

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
// the time from the first call to the last answer and the CPU spent (the
// broker's read from broker, nil where it shares this process). It stops
// at the first error.
func (w Workload) produce(ctx context.Context, broker cpuSource, send func(ctx context.Context) error) (phase, error) {
	return w.produceBatches(ctx, broker, 1, func(ctx context.Context, _ int) error { return send(ctx) })
}

// produceBatches is produce for sends of up to batch messages each: send
// is told how many messages to send, so that w.Msgs are sent in all.
func (w Workload) produceBatches(ctx context.Context, broker cpuSource, batch int, send func(ctx context.Context, n int) error) (phase, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	var (
		left    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		err     error
	)
	left.Store(int64(w.Msgs))
	start := startPhase(broker)
	for range w.Producers {
		wg.Go(func() {
			for ctx.Err() == nil {
				after := left.Add(-int64(batch))
				n := batch + int(min(after, 0))
				if n <= 0 {
					return
				}
				if w.Rate > 0 {
					sent := w.Msgs - int(after) - n // messages before this send's
					due := start.at.Add(time.Duration(float64(sent) / w.Rate * float64(time.Second)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				if e := send(ctx, n); e != nil {
					errOnce.Do(func() { err = e; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return start.end(time.Since(start.at)), err
}

// counter counts deliveries and says when w.Msgs have arrived.
type counter struct {
	want        int64
	n           atomic.Int64
	done        chan struct{}
	first, last atomic.Int64 // unix ns of the first and the want-th delivery
}

func newCounter(want int) *counter { return &counter{want: int64(want), done: make(chan struct{})} }

func (c *counter) add(n int) {
	if c.first.Load() == 0 {
		c.first.CompareAndSwap(0, time.Now().UnixNano())
	}
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
		return start.end(time.Unix(0, c.last.Load()).Sub(start.at)), nil
	case <-time.After(timeout):
		return phase{}, fmt.Errorf("consumed %d of %d messages in %s", c.n.Load(), c.want, timeout)
	case <-ctx.Done():
		return phase{}, ctx.Err()
	}
}

// sinceFirst is the time from the first delivery to the want-th, once
// wait has returned without an error.
func (c *counter) sinceFirst() time.Duration { return time.Duration(c.last.Load() - c.first.Load()) }
