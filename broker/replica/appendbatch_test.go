package replica

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/store"
)

// Concurrent appends share proposals, and each gets back the offsets of
// its own messages, in its own order.
func TestAppendBatcherSharesProposals(t *testing.T) {
	var mu sync.Mutex
	next, proposals := int64(0), 0
	release := make(chan struct{})
	first := true
	a := &appendBatcher{propose: func(op *store.Op) (*store.ApplyResult, error) {
		mu.Lock()
		hold := first
		first = false
		mu.Unlock()
		if hold {
			<-release // the first proposal is slow: the others queue behind it
		}
		mu.Lock()
		defer mu.Unlock()
		proposals++
		res := &store.ApplyResult{}
		for range op.Messages {
			res.Appended = append(res.Appended, store.Appended{QueueOffset: next})
			next++
		}
		return res, nil
	}}
	const callers = 16
	var wg sync.WaitGroup
	results := make([][]store.Appended, callers)
	started := make(chan struct{}, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := &store.Op{Kind: store.OpAppend}
			for k := range i%3 + 1 {
				op.Messages = append(op.Messages, store.AppendMessage{Record: []byte(fmt.Sprint(i, k))})
			}
			started <- struct{}{}
			res, err := a.append(op)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	for range callers {
		<-started
	}
	testwait.For(t, 10*time.Second, "the others queued behind the first", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.pending) == callers-1
	})
	close(release)
	wg.Wait()
	seen := map[int64]bool{}
	for i, r := range results {
		if len(r) != i%3+1 {
			t.Fatalf("caller %d got %d results, want %d", i, len(r), i%3+1)
		}
		for k, x := range r {
			if seen[x.QueueOffset] || (k > 0 && x.QueueOffset != r[k-1].QueueOffset+1) {
				t.Fatalf("caller %d: offsets %v", i, r)
			}
			seen[x.QueueOffset] = true
		}
	}
	if proposals != 2 { // the held one, then all the rest in one
		t.Errorf("%d proposals for %d concurrent appends, want 2", proposals, callers)
	}
}

// heldBatcher is a batcher whose proposals each report their size on
// started and wait for release; every proposal took an hour by its clock,
// so the wait for a batch to fill is bounded by maxLinger (an hour), not
// by the test's pace.
func heldBatcher() (a *appendBatcher, started chan int, release chan struct{}) {
	started, release = make(chan int, 8), make(chan struct{})
	var clock time.Time
	var clockMu sync.Mutex
	a = &appendBatcher{
		maxLinger: time.Hour,
		now: func() time.Time {
			clockMu.Lock()
			defer clockMu.Unlock()
			clock = clock.Add(time.Hour)
			return clock
		},
		propose: func(op *store.Op) (*store.ApplyResult, error) {
			started <- len(op.Messages)
			<-release
			return &store.ApplyResult{Appended: make([]store.Appended, len(op.Messages))}, nil
		},
	}
	return a, started, release
}

// sendAsync appends n messages through a in a goroutine of its own; the
// channel has the answer.
func sendAsync(a *appendBatcher, n int) chan error {
	done := make(chan error, 1)
	go func() {
		msgs := make([]store.AppendMessage, n)
		for i := range msgs {
			msgs[i].Record = []byte("m")
		}
		_, err := a.append(&store.Op{Kind: store.OpAppend, Messages: msgs})
		done <- err
	}()
	return done
}

// waitPending waits until n calls wait in a's pending batch.
func waitPending(t *testing.T, a *appendBatcher, n int, what string) {
	t.Helper()
	testwait.For(t, 10*time.Second, what, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.pending) == n
	})
}

// waitFilling waits until a's next lead waits for its batch to fill.
func waitFilling(t *testing.T, a *appendBatcher) {
	t.Helper()
	testwait.For(t, 10*time.Second, "the next lead waiting for its batch to fill", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.fill != nil
	})
}

// releaseAndWait lets the held proposal return and wants every call of
// calls answered without an error.
func releaseAndWait(t *testing.T, release chan<- struct{}, calls []chan error) {
	t.Helper()
	release <- struct{}{}
	for _, c := range calls {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}

// The sender that led a proposal returns as soon as its entry is answered
// (the next batch goes under another sender's lead), and the next batch
// waits until as many calls are pending as there were senders at work
// when the previous entry was answered, so closed-loop senders share one
// entry per round instead of splitting into cohorts that take turns.
func TestAppendBatcherWaitsForItsSenders(t *testing.T) {
	a, started, release := heldBatcher()
	send := func() chan error { return sendAsync(a, 1) }
	first := send()
	if n := <-started; n != 1 {
		t.Fatalf("first proposal carries %d messages, want 1", n)
	}
	others := []chan error{send(), send(), send()}
	waitPending(t, a, 3, "three sends queued behind the first")
	release <- struct{}{}
	select { // its lead ends with its own entry
	case err := <-first:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first sender is held behind the next round")
	}
	// Four senders were at work (one answered, three queued): the next
	// batch waits for a fourth.
	waitFilling(t, a)
	select {
	case n := <-started:
		t.Fatalf("a proposal of %d went before the batch filled", n)
	default:
	}
	others = append(others, send()) // the first sender sends again
	if n := <-started; n != 4 {
		t.Fatalf("second proposal carries %d messages, want 4", n)
	}
	releaseAndWait(t, release, others)
	select {
	case n := <-started:
		t.Fatalf("an extra proposal of %d", n)
	default:
	}
}

// The senders at work are counted in messages, not calls: one call may
// carry a whole run of a connection's sends (remoting/run.go), and a wave
// of senders that a second read splits in two must still share one entry.
func TestAppendBatcherCountsMessages(t *testing.T) {
	a, started, release := heldBatcher()
	send := func(n int) chan error { return sendAsync(a, n) }
	calls := []chan error{send(12)}
	if n := <-started; n != 12 {
		t.Fatalf("first proposal carries %d messages, want 12", n)
	}
	calls = append(calls, send(4))
	waitPending(t, a, 1, "a run of 4 queued behind the first")
	release <- struct{}{}
	// 16 senders at work: the 4 pending wait for 12 more, which come in two
	// runs (two calls, the count of calls at work before).
	waitFilling(t, a)
	calls = append(calls, send(8))
	waitPending(t, a, 2, "a run of 8 pending")
	select {
	case n := <-started:
		t.Fatalf("a proposal of %d went with 12 of the 16 senders' messages pending", n)
	case <-time.After(20 * time.Millisecond):
	}
	calls = append(calls, send(4))
	if n := <-started; n != 16 {
		t.Fatalf("second proposal carries %d messages, want 16", n)
	}
	releaseAndWait(t, release, calls)
}
