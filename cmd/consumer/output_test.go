package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/queue"
)

// fakeAfter hands out timer channels the test fires by hand.
type fakeAfter struct {
	mu    sync.Mutex
	chans []chan time.Time
	asked chan time.Duration
}

func newFakeAfter() *fakeAfter { return &fakeAfter{asked: make(chan time.Duration, 100)} }

func (f *fakeAfter) after(d time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	f.mu.Lock()
	f.chans = append(f.chans, c)
	f.mu.Unlock()
	f.asked <- d
	return c
}

// fireLast fires the newest timer.
func (f *fakeAfter) fireLast() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chans[len(f.chans)-1] <- time.Time{}
}

func waitAsync(ctx context.Context, o *output, idle time.Duration, fa *fakeAfter) <-chan stopReason {
	res := make(chan stopReason, 1)
	go func() { res <- waitStop(ctx, o, idle, fa.after) }()
	return res
}

func TestWaitStopIdleIsRearmedByMessages(t *testing.T) {
	o := newOutput(&bytes.Buffer{}, nil, false, 0, time.UTC)
	fa := newFakeAfter()
	res := waitAsync(context.Background(), o, time.Second, fa)
	if d := <-fa.asked; d != time.Second {
		t.Fatalf("idle timer of %v", d)
	}
	// A message re-arms: a fresh timer is asked for, the old one is
	// abandoned.
	o.offer(testMessage([]byte("x")))
	<-fa.asked
	select {
	case r := <-res:
		t.Fatalf("stopped (%v) after a message", r)
	default:
	}
	fa.fireLast()
	if r := <-res; r != stopIdle {
		t.Fatalf("reason %v, want idle", r)
	}
}

func TestWaitStopSignalAndLimit(t *testing.T) {
	fa := newFakeAfter()
	ctx, cancel := context.WithCancel(context.Background())
	o := newOutput(&bytes.Buffer{}, nil, false, 0, time.UTC)
	res := waitAsync(ctx, o, 0, fa)
	cancel()
	if r := <-res; r != stopSignal {
		t.Fatalf("reason %v, want interrupted", r)
	}
	select {
	case d := <-fa.asked:
		t.Fatalf("idle 0 armed a %v timer", d)
	default:
	}

	o = newOutput(&bytes.Buffer{}, nil, false, 2, time.UTC)
	res = waitAsync(context.Background(), o, 0, fa)
	o.offer(testMessage([]byte("1")))
	o.offer(testMessage([]byte("2")))
	if r := <-res; r != stopDone || !o.limitReached() {
		t.Fatalf("reason %v limit %v, want done", r, o.limitReached())
	}
}

func TestOutputLimitIsExactUnderConcurrentOffers(t *testing.T) {
	var buf bytes.Buffer
	o := newOutput(&buf, nil, true, 7, time.UTC)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := testMessage([]byte("x"))
			m.QueueOffset = int64(i)
			if o.offer(m) {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if accepted != 7 || o.count() != 7 {
		t.Fatalf("accepted %d, count %d, want 7", accepted, o.count())
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 7 {
		t.Fatalf("%d lines written, want 7", lines)
	}
	select {
	case <-o.done:
	default:
		t.Fatal("done not closed at the limit")
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("broken pipe")
	}
	w.n--
	return len(p), nil
}

func TestOutputWriteErrorRefusesAndStops(t *testing.T) {
	o := newOutput(&failingWriter{n: 1}, nil, false, 0, time.UTC)
	if !o.offer(testMessage([]byte("a"))) {
		t.Fatal("first message refused")
	}
	if o.offer(testMessage([]byte("b"))) || o.offer(testMessage([]byte("c"))) {
		t.Fatal("a message was accepted although stdout failed")
	}
	if o.count() != 1 || o.err() == nil || !strings.Contains(o.err().Error(), "write to stdout: broken pipe") {
		t.Fatalf("count %d err %v", o.count(), o.err())
	}
	select {
	case <-o.done:
	default:
		t.Fatal("done not closed after a write error")
	}
}

func TestOutputClearsStatusLineBeforeAMessage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := newOutput(&stdout, &stderr, false, 0, time.UTC)
	o.showStatus("[g] 0 messages")
	o.offer(testMessage([]byte("x")))
	o.offer(testMessage([]byte("y")))
	if got, want := stderr.String(), clearLine+"[g] 0 messages"+clearLine; got != want {
		t.Fatalf("stderr %q, want %q", got, want)
	}
	// Without a terminal, no status at all.
	var plain bytes.Buffer
	o = newOutput(&plain, nil, false, 0, time.UTC)
	o.showStatus("x")
	o.clearStatus()
	if o.offer(testMessage([]byte("x"))); strings.Contains(plain.String(), "\x1b") {
		t.Fatalf("escape codes on stdout: %q", plain.String())
	}
}

// fakeOffsets answers max and committed offsets from tables.
type fakeOffsets struct {
	max, committed map[queue.MessageQueue]int64
	err            error
}

func (f *fakeOffsets) MaxOffset(_ context.Context, mq queue.MessageQueue) (int64, error) {
	return f.max[mq], f.err
}

func (f *fakeOffsets) CommittedOffset(_ context.Context, mq queue.MessageQueue) (int64, error) {
	if off, ok := f.committed[mq]; ok {
		return off, nil
	}
	return -1, nil
}

func TestStatusLineShowsRateAndLag(t *testing.T) {
	q0 := queue.MessageQueue{Topic: "orders", BrokerName: "broker-a", QueueID: 0}
	q3 := queue.MessageQueue{Topic: "orders", BrokerName: "broker-a", QueueID: 3} // testMessage's queue
	q5 := queue.MessageQueue{Topic: "orders", BrokerName: "broker-a", QueueID: 5}
	offs := &fakeOffsets{
		max:       map[queue.MessageQueue]int64{q0: 10, q3: 50, q5: 4},
		committed: map[queue.MessageQueue]int64{q0: 6},
	}
	var stderr bytes.Buffer
	o := newOutput(&bytes.Buffer{}, &stderr, false, 0, time.UTC)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	s := newStatusLine(o, "g1", func() []queue.MessageQueue { return []queue.MessageQueue{q0, q3, q5} }, offs, now)
	for i := range 4 {
		m := testMessage([]byte("x"))
		m.QueueOffset = int64(40 + i) // last printed of q3: 43, so next 44
		o.offer(m)
	}
	clockMu.Lock()
	clock = clock.Add(2 * time.Second)
	clockMu.Unlock()

	tick := make(chan time.Time)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.run(ctx, tick); close(done) }()
	tick <- time.Time{}
	// Lag: q0 10-6 (committed) + q3 50-44 (printed) + q5 4-0 (nothing
	// committed yet) = 14. Rate: 4 messages in 2 s.
	tick <- time.Time{} // the second tick is taken only after the first line
	cancel()
	<-done
	got := stderr.String()
	if want := clearLine + "[g1] 4 messages, 2.0 msg/s, lag 14"; !strings.HasPrefix(got, want) {
		t.Fatalf("status %q, want prefix %q", got, want)
	}
	if !strings.HasSuffix(got, clearLine) {
		t.Fatalf("status line not erased at the end: %q", got)
	}

	// An unreachable broker shows an unknown lag rather than a wrong one.
	offs.err = errors.New("down")
	if _, ok := s.lag(context.Background()); ok {
		t.Fatal("lag known although the broker did not answer")
	}
	if got := formatStatus("g", 3, 0.5, 0, false); got != "[g] 3 messages, 0.5 msg/s, lag ?" {
		t.Fatalf("formatStatus %q", got)
	}
}
