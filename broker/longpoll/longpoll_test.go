package longpoll

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type wakeLog struct {
	mu     sync.Mutex
	events []string
}

func (l *wakeLog) req(name string, k Key, off int64, deadline time.Time) *Request {
	return &Request{Key: k, Offset: off, Deadline: deadline, Wake: func(expired bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if expired {
			l.events = append(l.events, name+":expired")
		} else {
			l.events = append(l.events, name+":arrived")
		}
	}}
}

func (l *wakeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.events
	l.events = nil
	return e
}

func eq(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestNotifyWakesOnlyRequestsBelowNewMax(t *testing.T) {
	t0 := time.Unix(100, 0)
	tbl := New(func() time.Time { return t0 })
	var log wakeLog
	k := Key{"T", 0}
	other := Key{"T", 1}
	for _, r := range []*Request{
		log.req("a", k, 5, t0.Add(time.Second)),
		log.req("b", k, 7, t0.Add(time.Second)),
		log.req("c", other, 0, t0.Add(time.Second)),
	} {
		if !tbl.Park(r) {
			t.Fatal("park refused on an empty table")
		}
	}
	tbl.Notify(k, 5) // offset 5 is not yet readable: max 5 means offsets < 5
	if got := log.take(); len(got) != 0 {
		t.Fatalf("woken early: %v", got)
	}
	tbl.Notify(k, 6)
	if got := log.take(); !eq(got, []string{"a:arrived"}) {
		t.Fatalf("got %v", got)
	}
	tbl.Notify(k, 100)
	if got := log.take(); !eq(got, []string{"b:arrived"}) {
		t.Fatalf("got %v", got)
	}
	if tbl.Len() != 1 {
		t.Fatalf("len = %d, want 1 (c)", tbl.Len())
	}
	// c expires; a and b, already answered, never wake twice.
	tbl.ExpireDue(t0.Add(time.Second))
	if got := log.take(); !eq(got, []string{"c:expired"}) {
		t.Fatalf("got %v", got)
	}
	tbl.Close()
	if got := log.take(); len(got) != 0 {
		t.Fatalf("close woke answered requests: %v", got)
	}
}

func TestParkRefusedWhenArrivalAlreadyAnnounced(t *testing.T) {
	tbl := New(nil)
	defer tbl.Close()
	var log wakeLog
	k := Key{"T", 0}
	tbl.Notify(k, 10)
	if tbl.Park(log.req("late", k, 9, time.Now().Add(time.Hour))) {
		t.Fatal("parked a request that an earlier arrival satisfies")
	}
	if !tbl.Park(log.req("ok", k, 10, time.Now().Add(time.Hour))) {
		t.Fatal("refused a request beyond the newest arrival")
	}
	// A stale, lower announcement does not lower the remembered max.
	tbl.Notify(k, 3)
	if tbl.Park(log.req("late2", k, 9, time.Now().Add(time.Hour))) {
		t.Fatal("max offset went backwards")
	}
	tbl.Forget(k)
	if !tbl.Park(log.req("after-forget", k, 0, time.Now().Add(time.Hour))) {
		t.Fatal("forget did not clear the queue's max")
	}
}

func TestExpireDueInDeadlineOrder(t *testing.T) {
	t0 := time.Unix(100, 0)
	tbl := New(func() time.Time { return t0 })
	var log wakeLog
	k := Key{"T", 0}
	tbl.Park(log.req("late", k, 0, t0.Add(3*time.Second)))
	tbl.Park(log.req("early", k, 0, t0.Add(1*time.Second)))
	tbl.Park(log.req("mid", k, 0, t0.Add(2*time.Second)))
	if next := tbl.ExpireDue(t0); !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("next deadline %v", next)
	}
	if next := tbl.ExpireDue(t0.Add(2 * time.Second)); !next.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("next deadline %v", next)
	}
	if got := log.take(); !eq(got, []string{"early:expired", "mid:expired"}) {
		t.Fatalf("got %v", got)
	}
	if next := tbl.ExpireDue(t0.Add(time.Hour)); !next.IsZero() {
		t.Fatalf("next deadline %v on an empty table", next)
	}
	if got := log.take(); !eq(got, []string{"late:expired"}) {
		t.Fatalf("got %v", got)
	}
	tbl.Close()
}

func TestCloseAnswersEveryParkedRequest(t *testing.T) {
	tbl := New(nil)
	tbl.Start()
	var log wakeLog
	for i := 0; i < 10; i++ {
		tbl.Park(log.req("r", Key{"T", int32(i % 3)}, 0, time.Now().Add(time.Hour)))
	}
	tbl.Close()
	if got := log.take(); len(got) != 10 {
		t.Fatalf("close answered %d of 10", len(got))
	}
	if tbl.Park(log.req("after", Key{"T", 0}, 0, time.Now().Add(time.Hour))) {
		t.Fatal("parked on a closed table")
	}
	tbl.Close() // idempotent
}

// TestTimerGoroutineExpires checks the real timer path end to end: a
// request with a near deadline is answered without anyone calling ExpireDue.
func TestTimerGoroutineExpires(t *testing.T) {
	tbl := New(nil)
	tbl.Start()
	defer tbl.Close()
	done := make(chan bool, 1)
	tbl.Park(&Request{Key: Key{"T", 0}, Deadline: time.Now().Add(time.Hour), Wake: func(bool) {}})
	// A later park with an earlier deadline must re-arm the timer.
	tbl.Park(&Request{Key: Key{"T", 0}, Deadline: time.Now().Add(5 * time.Millisecond), Wake: func(e bool) { done <- e }})
	select {
	case expired := <-done:
		if !expired {
			t.Fatal("woken as arrival")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("timer never fired")
	}
}

// TestEachRequestWokenOnce races arrivals, expiry and re-parking.
func TestEachRequestWokenOnce(t *testing.T) {
	tbl := New(nil)
	tbl.Start()
	k := Key{"T", 0}
	const n = 2000
	var wakes [n]atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		i := i
		wg.Add(1)
		go func() {
			defer wg.Done()
			tbl.Park(&Request{Key: k, Offset: int64(i), Deadline: time.Now().Add(time.Duration(i%5) * time.Millisecond),
				Wake: func(bool) { wakes[i].Add(1) }})
		}()
	}
	for off := int64(0); off <= n; off += 97 {
		tbl.Notify(k, off)
	}
	wg.Wait()
	tbl.Close()
	for i := range wakes {
		// A request refused by Park (already satisfied) is never woken; a
		// parked one exactly once.
		if w := wakes[i].Load(); w > 1 {
			t.Fatalf("request %d woken %d times", i, w)
		}
	}
	if tbl.Len() != 0 {
		t.Fatalf("%d requests left after close", tbl.Len())
	}
}

func BenchmarkParkNotify(b *testing.B) {
	tbl := New(nil)
	defer tbl.Close()
	k := Key{"T", 0}
	dl := time.Now().Add(time.Hour)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tbl.Park(&Request{Key: k, Offset: int64(i), Deadline: dl, Wake: func(bool) {}})
		tbl.Notify(k, int64(i+1))
	}
}

func TestOffsetsListsParkedRequests(t *testing.T) {
	tb := New(nil)
	k := Key{Topic: "T", QueueID: 1}
	for _, off := range []int64{3, 5} {
		if !tb.Park(&Request{Key: k, Offset: off, Deadline: time.Now().Add(time.Hour), Wake: func(bool) {}}) {
			t.Fatal("not parked")
		}
	}
	if got := tb.Offsets(k); len(got) != 2 || got[0] != 3 || got[1] != 5 {
		t.Fatalf("offsets %v", got)
	}
	tb.Close()
	if got := tb.Offsets(k); len(got) != 0 {
		t.Fatalf("offsets after close %v", got)
	}
}

// TestWakeKeyAndCancel: WakeKey wakes every request of its key whatever
// its offset and leaves the rest; Cancel takes a parked request out
// unwoken, once, and a request never parked is not cancelled.
func TestWakeKeyAndCancel(t *testing.T) {
	t0 := time.Unix(100, 0)
	tbl := New(func() time.Time { return t0 })
	var log wakeLog
	a, b := Key{"T", 0}, Key{"T", 1}
	r1, r2, r3 := log.req("r1", a, 10, t0.Add(time.Second)), log.req("r2", a, 99, t0.Add(time.Second)), log.req("r3", b, 0, t0.Add(time.Second))
	for _, r := range []*Request{r1, r2, r3} {
		if !tbl.Park(r) {
			t.Fatal("park refused")
		}
	}
	tbl.WakeKey(a)
	if got := log.take(); !eq(got, []string{"r1:arrived", "r2:arrived"}) {
		t.Fatalf("WakeKey woke %v", got)
	}
	if tbl.Cancel(r1) || !tbl.Cancel(r3) || tbl.Cancel(r3) || tbl.Len() != 0 {
		t.Fatalf("cancel: %d left", tbl.Len())
	}
	if tbl.Cancel(log.req("never", a, 0, t0)) {
		t.Fatal("a request never parked was cancelled")
	}
	tbl.ExpireDue(t0.Add(time.Hour))
	if got := log.take(); len(got) != 0 {
		t.Fatalf("cancelled requests woke: %v", got)
	}
	// A key woken holds nothing of its announced offsets: a later park
	// at any offset is taken.
	if !tbl.Park(log.req("r4", a, 0, t0.Add(time.Second))) {
		t.Fatal("park after WakeKey refused")
	}
	tbl.Close()
	log.take()
}

// TestParkRefusedAfterAWakeItMissed: a request that read the key's wake
// count before a WakeKey is refused, so it looks again; one that read it
// after parks.
func TestParkRefusedAfterAWakeItMissed(t *testing.T) {
	t0 := time.Unix(100, 0)
	tbl := New(func() time.Time { return t0 })
	var log wakeLog
	k := Key{"T", 0}
	seen := tbl.WakeCount(k)
	tbl.WakeKey(k) // nobody parked yet
	r := log.req("late", k, 5, t0.Add(time.Second))
	r.Wakes = seen
	if tbl.Park(r) {
		t.Fatal("parked past a wake it did not see")
	}
	r.Wakes = tbl.WakeCount(k)
	if !tbl.Park(r) {
		t.Fatal("refused with the current wake count")
	}
	// A request without a count (a held pull) is not refused for wakes.
	if !tbl.Park(log.req("pull", k, 5, t0.Add(time.Second))) {
		t.Fatal("a pull refused")
	}
	tbl.Close()
	log.take()
}
