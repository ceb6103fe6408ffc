package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/runnelmq/runnel/client"
)

// benchProperty carries "<run id>:<unix nanoseconds>" in every message a
// bench producer sends: the run, so that `bench run` counts only its own
// messages, and the birth instant at a finer grain than the born timestamp's
// milliseconds.
const benchProperty = "runnelctlBench"

// drainAfterProduce bounds how long `bench run` waits for its consumers
// once the producers have stopped.
const drainAfterProduce = 30 * time.Second

// benchRun is the shared state of one bench invocation.
type benchRun struct {
	a  *app
	f  benchFlags
	id string // stamped into benchProperty

	sent, received atomic.Int64
	recvBytes      atomic.Int64
	lastRecv       atomic.Int64 // unix ns of the latest counted delivery

	mu   sync.Mutex
	recv *hdrhistogram.Histogram // end-to-end latency, µs; guarded by mu
}

func newBenchRun(a *app, f benchFlags) *benchRun {
	return &benchRun{a: a, f: f, id: strconv.FormatInt(time.Now().UnixNano(), 36), recv: newLatencyHistogram()}
}

// newLatencyHistogram holds 1 µs to 1 h at 3 significant digits.
func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

// record adds d to h, clamped into its range: a negative end-to-end latency
// is a clock difference between machines, not a measurement.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	us := max(int64(d/time.Microsecond), 0)
	_ = h.RecordValue(min(us, h.HighestTrackableValue()))
}

func (r *benchRun) clientConfig(role string, i int) client.ClientConfig {
	// Each producer and consumer is its own client instance, so each has
	// its own connections, as separate processes would.
	return r.a.clientConfig(fmt.Sprintf("bench-%s%d", role, i))
}

// claimer hands out the messages of a run bounded by --msgs, batch by batch.
type claimer struct{ left atomic.Int64 }

// claim returns how many of up to n messages the caller may send: 0 once
// the run's messages are all handed out.
func (c *claimer) claim(n int) int {
	left := c.left.Add(-int64(n))
	if left >= 0 {
		return n
	}
	if got := int64(n) + left; got > 0 {
		return int(got)
	}
	return 0
}

// produce runs the producers until the run's messages are sent, runCtx ends
// or a send fails, and reports them. Sends in flight at runCtx's end finish
// under ctx.
func (r *benchRun) produce(ctx, runCtx context.Context) (*phaseReport, error) {
	f := r.f
	producers := make([]*client.Producer, 0, f.producers)
	defer func() {
		for _, p := range producers {
			_ = p.Shutdown(context.Background())
		}
	}()
	for i := range f.producers {
		cfg := client.DefaultProducerConfig()
		cfg.Client = r.clientConfig("p", i)
		cfg.Group = f.group
		if r.a.timeout > 0 {
			cfg.SendTimeout = r.a.timeout
		}
		p, err := client.NewProducer(cfg)
		if err != nil {
			return nil, err
		}
		if err := p.Start(ctx); err != nil {
			return nil, fmt.Errorf("start producer %d: %w", i, err)
		}
		producers = append(producers, p)
	}
	body := make([]byte, f.size)
	_, _ = rand.Read(body) // incompressible, like most real payloads

	var c claimer
	if f.msgs > 0 {
		c.left.Store(f.msgs)
	} else {
		c.left.Store(1 << 62)
	}
	runCtx, stop := context.WithCancel(runCtx)
	defer stop()
	var (
		failOnce sync.Once
		failErr  error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		failOnce.Do(func() { failErr = err; stop() })
	}
	senders := max(f.senders, 1)
	hists := make([]*hdrhistogram.Histogram, f.producers*senders)
	start := time.Now()
	for i, p := range producers {
		for k := range senders {
			h := newLatencyHistogram()
			hists[i*senders+k] = h
			wg.Go(func() { r.producer(ctx, runCtx, p, &c, body, h, fail) })
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failErr != nil {
		return nil, failErr
	}
	lat := newLatencyHistogram()
	for _, h := range hists {
		lat.Merge(h)
	}
	n := r.sent.Load()
	return newPhaseReport("send", f, f.producers, n, n*int64(f.size), elapsed, lat), nil
}

// producer is one producer's loop; with --async it keeps up to --inflight
// sends outstanding and waits for them before it returns.
func (r *benchRun) producer(ctx, runCtx context.Context, p *client.Producer, c *claimer, body []byte,
	hist *hdrhistogram.Histogram, fail func(error)) {
	f := r.f
	var (
		mu       sync.Mutex // guards hist for async callbacks
		inflight sync.WaitGroup
		slots    = make(chan struct{}, f.inflight)
	)
	defer inflight.Wait()
	for runCtx.Err() == nil {
		n := c.claim(f.batch)
		if n == 0 {
			return
		}
		msgs := r.messages(n, body)
		begin := time.Now()
		if !f.async {
			if _, err := p.Send(ctx, msgs...); err != nil {
				if ctx.Err() == nil { // an interrupted send is the end of the run, not a failure
					fail(fmt.Errorf("send to %s after %d messages: %w", f.topic, r.sent.Load(), err))
				}
				return
			}
			record(hist, time.Since(begin))
			r.sent.Add(int64(n))
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-runCtx.Done():
			return
		}
		inflight.Add(1)
		err := p.SendAsync(ctx, func(_ client.SendResult, err error) {
			defer inflight.Done()
			defer func() { <-slots }()
			if err != nil {
				if ctx.Err() == nil {
					fail(fmt.Errorf("send to %s after %d messages: %w", f.topic, r.sent.Load(), err))
				}
				return
			}
			mu.Lock()
			record(hist, time.Since(begin))
			mu.Unlock()
			r.sent.Add(int64(n))
		}, msgs...)
		if err != nil {
			inflight.Done()
			<-slots
			fail(fmt.Errorf("send to %s: %w", f.topic, err))
			return
		}
	}
}

// messages builds n messages sharing body, stamped with this run and now
// (the client copies properties, so they share one map).
func (r *benchRun) messages(n int, body []byte) []*client.Message {
	props := map[string]string{benchProperty: r.id + ":" + strconv.FormatInt(time.Now().UnixNano(), 10)}
	msgs := make([]*client.Message, n)
	for i := range msgs {
		msgs[i] = &client.Message{Topic: r.f.topic, Body: body, Properties: props}
	}
	return msgs
}

// benchConsumers are a run's push consumers.
type benchConsumers struct {
	r     *benchRun
	cons  []*client.PushConsumer
	start time.Time
}

// startConsumers starts the run's push consumers. With ownOnly they count
// only messages this run produced.
func (r *benchRun) startConsumers(ctx context.Context, ownOnly bool) (*benchConsumers, error) {
	// Deliveries begin inside Start (its first rebalance), so the time
	// starts before it.
	bc := &benchConsumers{r: r, start: time.Now()}
	for i := range r.f.consumers {
		cfg := client.DefaultPushConsumerConfig()
		cfg.Client = r.clientConfig("c", i)
		cfg.Group = r.f.group
		cfg.ConsumeFrom = client.ConsumeFromFirstOffset
		cfg.ConsumeBatchSize = cfg.PullBatchSize // a listener call takes a whole pull
		cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
			r.delivered(msgs, ownOnly)
			return client.ConsumeSuccess
		}
		c, err := client.NewPushConsumer(cfg)
		if err == nil {
			err = c.Subscribe(r.f.topic, "*")
		}
		if err == nil {
			err = c.Start(ctx)
		}
		if err != nil {
			bc.shutdown()
			return nil, fmt.Errorf("start consumer %d: %w", i, err)
		}
		bc.cons = append(bc.cons, c)
	}
	return bc, nil
}

// delivered counts and times a listener call's messages.
func (r *benchRun) delivered(msgs []*client.MessageExt, ownOnly bool) {
	now := time.Now()
	counted, bytes := 0, 0
	r.mu.Lock()
	for _, m := range msgs {
		born, own := r.bornOf(m)
		if ownOnly && !own {
			continue
		}
		record(r.recv, now.Sub(born))
		counted++
		bytes += len(m.Body)
	}
	r.mu.Unlock()
	if counted > 0 {
		r.recvBytes.Add(int64(bytes))
		r.lastRecv.Store(now.UnixNano())
		r.received.Add(int64(counted))
	}
}

// bornOf returns when m was made, and whether this run made it.
func (r *benchRun) bornOf(m *client.MessageExt) (time.Time, bool) {
	if v, ok := m.Properties[benchProperty]; ok {
		id, ns, ok := strings.Cut(v, ":")
		if n, err := strconv.ParseInt(ns, 10, 64); ok && err == nil {
			return time.Unix(0, n), id == r.id
		}
	}
	return time.UnixMilli(m.BornTimestamp), false
}

// wait returns once target() messages have arrived (target is re-read, as
// `bench run` learns it only when its producers stop), or when done ends.
func (bc *benchConsumers) wait(done <-chan struct{}, target func() (int64, bool)) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if n, ok := target(); ok && bc.r.received.Load() >= n {
			return
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// finish shuts the consumers down (committing what they consumed) and
// reports from start to the last counted delivery.
func (bc *benchConsumers) finish(start time.Time) *phaseReport {
	bc.shutdown()
	r := bc.r
	n := r.received.Load()
	var elapsed time.Duration
	if last := r.lastRecv.Load(); last > 0 {
		elapsed = time.Unix(0, last).Sub(start)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return newPhaseReport("end-to-end", r.f, r.f.consumers, n, r.recvBytes.Load(), elapsed, r.recv)
}

func (bc *benchConsumers) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range bc.cons {
		_ = c.Shutdown(ctx)
	}
}

// bench runs produce, consume or both (which) and prints the report.
func (a *app) bench(ctx context.Context, f benchFlags, which int) error {
	if err := a.ensureBenchTopic(ctx, f); err != nil {
		return err
	}
	r := newBenchRun(a, f)
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if f.duration > 0 {
		runCtx, cancel = context.WithTimeout(ctx, f.duration)
	}
	defer cancel()

	producing, consuming := which&benchProduceFlags != 0, which&benchConsumeFlags != 0
	var cons *benchConsumers
	if consuming {
		var err error
		if cons, err = r.startConsumers(ctx, producing); err != nil {
			return err
		}
	}
	progress, label := &r.sent, "produce"
	if consuming {
		progress, label = &r.received, "consume"
	}
	bar := startBenchBar(a.stdout, isTerminal(a.stdout), label, f.msgs, progress)

	var rep benchReport
	start := time.Now()
	if producing {
		p, err := r.produce(ctx, runCtx)
		if err != nil {
			bar.stop()
			if cons != nil {
				cons.shutdown()
			}
			return err
		}
		rep.Produce = p
	}
	if consuming {
		done := runCtx.Done()
		target := func() (int64, bool) { return f.msgs, f.msgs > 0 }
		if producing {
			// The producers have stopped: the consumers wait for what they
			// sent, however the run ended, but not forever.
			drain, stop := context.WithTimeout(ctx, drainAfterProduce)
			defer stop()
			done = drain.Done()
			target = func() (int64, bool) { return r.sent.Load(), true }
		} else {
			start = cons.start
		}
		cons.wait(done, target)
		rep.Consume = cons.finish(start)
		if producing && rep.Consume.Msgs < rep.Produce.Msgs {
			fmt.Fprintf(a.stderr, "runnelctl: warning: consumed %d of the %d messages produced\n", rep.Consume.Msgs, rep.Produce.Msgs)
		}
	}
	bar.stop()
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(a.stderr, "runnelctl: interrupted; the report covers what was done")
	}
	if a.output == "json" {
		return writeJSON(a.stdout, rep)
	}
	return rep.writeText(a.stdout)
}
