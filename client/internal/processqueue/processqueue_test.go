package processqueue

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"
)

type msg struct {
	off  int64
	size int
}

func (m msg) QueueOffset() int64 { return m.off }
func (m msg) BodySize() int      { return m.size }

func newClock() *fakeclock.Clock { return fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) }

func newPQ(c *fakeclock.Clock) *ProcessQueue[msg] {
	cfg := DefaultConfig()
	cfg.Now = c.Now
	return New[msg](cfg)
}

func msgs(offs ...int64) []msg {
	out := make([]msg, len(offs))
	for i, o := range offs {
		out[i] = msg{off: o, size: 10 + int(o)}
	}
	return out
}

func offsets(ms []msg) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.off)
	}
	return out
}

func TestPutAccounting(t *testing.T) {
	pq := newPQ(newClock())
	if !pq.Put(msgs(12, 10, 11)) {
		t.Fatal("first Put into an empty queue must ask for dispatch")
	}
	s := pq.Stats()
	if s.Count != 3 || s.SizeBytes != 22+20+21 || s.MinOffset != 10 || s.MaxOffset != 12 || s.Span != 2 {
		t.Fatalf("stats after put = %+v", s)
	}
	// Duplicates are ignored and not counted; dispatch is already marked.
	if pq.Put(msgs(11, 12)) {
		t.Fatal("Put while dispatch is marked must not ask again")
	}
	if s := pq.Stats(); s.Count != 3 || s.SizeBytes != 63 {
		t.Fatalf("duplicates were counted: %+v", s)
	}
	if !pq.Contains(11) || pq.Contains(13) || !pq.HasHeld() {
		t.Fatal("Contains/HasHeld wrong")
	}
}

func TestRemoveReturnsOffsetToCommit(t *testing.T) {
	pq := newPQ(newClock())
	if got := pq.Remove(msgs(0)); got != -1 {
		t.Fatalf("Remove on a never-filled queue = %d, want -1", got)
	}
	pq.Put(msgs(100, 101, 102, 103, 104))
	steps := []struct {
		remove []int64
		want   int64
	}{
		{[]int64{102}, 100},      // a gap does not advance the commit point
		{[]int64{100}, 101},      // lowest consumed: advance to the next held
		{[]int64{999}, 101},      // unknown message: nothing changes
		{[]int64{104, 101}, 103}, // any order
		{[]int64{103}, 105},      // empty: one past the highest ever put
	}
	for _, st := range steps {
		if got := pq.Remove(msgs(st.remove...)); got != st.want {
			t.Fatalf("Remove(%v) = %d, want %d", st.remove, got, st.want)
		}
	}
	if s := pq.Stats(); s.Count != 0 || s.SizeBytes != 0 || s.Span != 0 {
		t.Fatalf("stats after removing everything = %+v", s)
	}
	// Held nothing at the start of the call: -1 (commit nothing), as Java.
	if got := pq.Remove(msgs(103)); got != -1 {
		t.Fatalf("Remove on an emptied queue = %d, want -1", got)
	}
}

// TestRemoveMatchesModel drives random puts and removes against a plain map
// model of Java's semantics.
func TestRemoveMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pq := newPQ(newClock())
	model := map[int64]int{}
	var maxOff, next int64
	for range 5000 {
		if r.IntN(3) == 0 {
			n := r.IntN(8)
			batch := msgs()
			for range n {
				batch = append(batch, msg{off: next, size: r.IntN(100)})
				model[next] = batch[len(batch)-1].size
				maxOff = max(maxOff, next)
				next++
			}
			pq.Put(batch)
			continue
		}
		var batch []msg
		for range 1 + r.IntN(4) {
			o := next - 1 - int64(r.IntN(40))
			if o >= 0 {
				batch = append(batch, msg{off: o, size: model[o]})
			}
		}
		var want int64 = -1
		if len(model) > 0 {
			for _, m := range batch {
				delete(model, m.off)
			}
			want = maxOff + 1
			for o := range model {
				want = min(want, o)
			}
		}
		if got := pq.Remove(batch); got != want {
			t.Fatalf("Remove(%v) = %d, model says %d", offsets(batch), got, want)
		}
		var size int64
		for _, s := range model {
			size += int64(s)
		}
		if s := pq.Stats(); s.Count != int64(len(model)) || s.SizeBytes != size {
			t.Fatalf("stats %+v, model count %d size %d", s, len(model), size)
		}
	}
}

func TestOrderlyTakeCommitConsumeAgain(t *testing.T) {
	pq := newPQ(newClock())
	pq.Put(msgs(0, 1, 2, 3, 4, 5, 6, 7, 8, 9))

	if got := offsets(pq.Take(3)); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("Take(3) = %v", got)
	}
	// Taken messages still count until committed, but leave the span.
	if s := pq.Stats(); s.Count != 10 || s.MinOffset != 3 || s.Span != 6 {
		t.Fatalf("stats while consuming = %+v", s)
	}
	if got := pq.Commit(); got != 3 {
		t.Fatalf("Commit = %d, want 3", got)
	}
	if s := pq.Stats(); s.Count != 7 || s.SizeBytes != int64(13+14+15+16+17+18+19) {
		t.Fatalf("stats after commit = %+v", s)
	}

	taken := pq.Take(3) // 3, 4, 5
	pq.ConsumeAgain(taken[1:])
	if got := pq.Commit(); got != 4 {
		t.Fatalf("Commit after ConsumeAgain(4,5) = %d, want 4", got)
	}
	if got := offsets(pq.Take(100)); !slices.Equal(got, []int64{4, 5, 6, 7, 8, 9}) {
		t.Fatalf("Take after ConsumeAgain = %v", got)
	}
	pq.Rollback()
	if got := offsets(pq.Take(2)); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("Take after Rollback = %v", got)
	}
	// Consuming set out of take order: 4,5 taken, 5 returned, then 5 taken
	// again with 6; Commit still goes one past the highest.
	pq.ConsumeAgain(msgs(5))
	pq.Take(2)
	if got := pq.Commit(); got != 7 {
		t.Fatalf("Commit = %d, want 7", got)
	}
	if got := pq.Commit(); got != -1 {
		t.Fatalf("Commit with nothing taken = %d, want -1", got)
	}
	pq.Take(100)
	pq.Commit()
	if s := pq.Stats(); s.Count != 0 || s.SizeBytes != 0 {
		t.Fatalf("stats when all committed = %+v", s)
	}
	// An empty Take ends the dispatch, so the next Put dispatches again.
	if pq.Put(msgs(10)) {
		t.Fatal("dispatch still marked: Put must not ask")
	}
	pq.Take(1)
	if len(pq.Take(1)) != 0 {
		t.Fatal("Take on empty queue returned messages")
	}
	if !pq.Put(msgs(11)) {
		t.Fatal("Put after an empty Take must ask for dispatch")
	}
	// A message being consumed is not re-added by a duplicate Put.
	pq.Take(1)
	pq.Put(msgs(11))
	if s := pq.Stats(); s.Count != 2 || pq.Contains(11) {
		t.Fatalf("duplicate of a consuming message was added: %+v", s)
	}
}

func TestClear(t *testing.T) {
	pq := newPQ(newClock())
	pq.Put(msgs(5, 6, 7))
	pq.Take(1)
	pq.Clear()
	if s := pq.Stats(); s.Count != 0 || s.SizeBytes != 0 || s.Span != 0 || pq.HasHeld() {
		t.Fatalf("stats after Clear = %+v", s)
	}
	if got := pq.Commit(); got != -1 {
		t.Fatalf("Commit after Clear = %d", got)
	}
	pq.Put(msgs(1))
	if got := pq.Remove(msgs(1)); got != 2 {
		t.Fatalf("Remove after Clear = %d, want 2 (highest reset)", got)
	}
}

func TestLockExpiryUsesClock(t *testing.T) {
	c := newClock()
	pq := newPQ(c)
	if pq.Locked() || pq.LockValid() {
		t.Fatal("new queue must not be locked")
	}
	pq.MarkLocked()
	c.Advance(30 * time.Second)
	if pq.LockExpired() || !pq.LockValid() {
		t.Fatal("lock expired at exactly LockMaxLive")
	}
	c.Advance(time.Nanosecond)
	if !pq.LockExpired() || pq.LockValid() || !pq.Locked() {
		t.Fatal("lock not expired after LockMaxLive, or flag lost")
	}
	pq.MarkLocked() // renewal
	if pq.LockExpired() || !pq.LockValid() {
		t.Fatal("renewed lock not valid")
	}
	pq.MarkUnlocked()
	if pq.Locked() || pq.LockValid() {
		t.Fatal("unlocked queue reported locked")
	}
}

func TestPullExpiryAndTimestamps(t *testing.T) {
	c := newClock()
	pq := newPQ(c)
	start := c.Now()
	c.Advance(120 * time.Second)
	if pq.PullExpired() {
		t.Fatal("pull expired at exactly PullMaxIdle")
	}
	c.Advance(time.Millisecond)
	if !pq.PullExpired() {
		t.Fatal("pull not expired after PullMaxIdle")
	}
	pq.MarkPulled()
	if pq.PullExpired() {
		t.Fatal("MarkPulled did not reset the idle time")
	}
	pq.Put(msgs(1))
	c.Advance(time.Second)
	pq.Remove(msgs(1))
	s := pq.Stats()
	if !s.LastPull.Equal(start.Add(120*time.Second+time.Millisecond)) || !s.LastConsume.Equal(c.Now()) {
		t.Fatalf("timestamps = %+v", s)
	}
}

func TestDropped(t *testing.T) {
	pq := newPQ(newClock())
	if pq.Dropped() {
		t.Fatal("new queue dropped")
	}
	pq.Drop()
	if !pq.Dropped() || !pq.Stats().Dropped {
		t.Fatal("Drop not recorded")
	}
}

func TestConsumeToken(t *testing.T) {
	pq := newPQ(newClock())
	if err := pq.AcquireConsume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pq.TryAcquireConsume() {
		t.Fatal("token acquired twice")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pq.AcquireConsume(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("AcquireConsume on a held token with a cancelled ctx = %v", err)
	}
	if err := pq.ReleaseConsume(); err != nil {
		t.Fatal(err)
	}
	if err := pq.ReleaseConsume(); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("double release = %v, want ErrNotAcquired", err)
	}
	if !pq.TryAcquireConsume() {
		t.Fatal("free token not acquired")
	}
	if pq.IncTryUnlockTimes() != 1 || pq.IncTryUnlockTimes() != 2 || pq.TryUnlockTimes() != 2 {
		t.Fatal("try-unlock counter wrong")
	}
}

// TestConcurrentPutRemove runs a puller and several consumers at once (run
// with -race); at the end everything put was removed and the last commit
// offset is one past the highest.
func TestConcurrentPutRemove(t *testing.T) {
	pq := newPQ(newClock())
	const total = 4000
	ch := make(chan msg, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var commits []int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range ch {
				off := pq.Remove([]msg{m})
				mu.Lock()
				commits = append(commits, off)
				mu.Unlock()
			}
		}()
	}
	for o := int64(0); o < total; o += 8 {
		batch := msgs(o, o+1, o+2, o+3, o+4, o+5, o+6, o+7)
		pq.Put(batch)
		for _, m := range batch {
			ch <- m
		}
	}
	close(ch)
	wg.Wait()
	if s := pq.Stats(); s.Count != 0 || s.SizeBytes != 0 {
		t.Fatalf("leftover after concurrent consumption: %+v", s)
	}
	if slices.Max(commits) != total {
		t.Fatalf("highest commit = %d, want %d", slices.Max(commits), total)
	}
}

func BenchmarkPutRemove(b *testing.B) {
	pq := newPQ(newClock())
	batch := make([]msg, 32)
	var off int64
	for b.Loop() {
		for i := range batch {
			batch[i] = msg{off: off, size: 100}
			off++
		}
		pq.Put(batch)
		for i := range batch {
			pq.Remove(batch[i : i+1])
		}
	}
}
