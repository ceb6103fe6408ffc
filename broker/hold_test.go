package broker

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestManyHeldPullsAreCheap holds 10,000 pulls and checks they cost no
// goroutine each and a bounded amount of memory, then wakes them all with
// one message.
func TestManyHeldPullsAreCheap(t *testing.T) {
	if testing.Short() {
		t.Skip("holds 10,000 pulls")
	}
	b, rc := withTopic(t, "Many", 1)
	const n = 10_000
	h := pullHeader("g", "Many", 0, 0, 32, protocol.PullFlagSuspend|protocol.PullFlagSubscription)
	h.Subscription = "*"
	// Held far longer than the test needs: the first pull must still be
	// held when the last is, however slowly a loaded machine (-race)
	// sends 10,000 of them.
	h.SuspendTimeoutMillis = 120_000
	ext := h.Encode()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()

	var answered, found atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	for range n {
		err := rc.cl.InvokeAsync(ctx, b.Addr(), protocol.NewRequest(protocol.ReqPullMessage, ext, nil), func(r *protocol.Command, err error) {
			if err == nil && r.Code == protocol.RespSuccess {
				found.Add(1)
			}
			answered.Add(1)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, 60*time.Second, "all pulls held", func() bool { return b.core.HeldPulls() == n })
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perPull := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	// The burst leaves request workers parked for the requests to come
	// (up to its concurrency, for a few seconds); they are the server's,
	// not the held pulls'.
	parked := b.Remoting().Server().ParkedWorkers()
	extra := runtime.NumGoroutine() - goroutines - parked
	t.Logf("%d held pulls: %d bytes of heap each (client's pending calls included), %d extra goroutines besides %d parked workers", n, perPull, extra, parked)
	if extra > 100 {
		t.Fatalf("%d extra goroutines for %d held pulls", extra, n)
	}
	if perPull > 16<<10 {
		t.Fatalf("%d bytes per held pull", perPull)
	}
	if answered.Load() != 0 {
		t.Fatalf("%d answered before any message", answered.Load())
	}

	// The send's answer queues behind 10,000 pull answers on the same
	// connection: generous bounds for a loaded machine.
	wake := rc.callTimeout(protocol.ReqSendMessage, sendHeader("Many", 0, nil).Encode(), []byte("wake all"), 30*time.Second)
	expect(t, wake, protocol.RespSuccess, "")
	testwait.For(t, 30*time.Second, "every pull answered", func() bool { return answered.Load() == n })
	if found.Load() != n {
		t.Fatalf("%d of %d woken pulls returned the message", found.Load(), n)
	}
}

// holdsAt reports whether a pull on LF queue 0 is held at offset off.
func (b *Broker) holdsAt(off int64) bool {
	return slices.Contains(b.core.HeldOffsets("LF", 0), off)
}
