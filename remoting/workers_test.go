package remoting

import (
	"github.com/runnelmq/runnel/internal/testwait"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// poolOwner is a connOwner for testing workerPool alone: it counts the
// goroutines the pool starts and runs fn for every request.
type poolOwner struct {
	wg      sync.WaitGroup
	spawned atomic.Int64
	fn      func(req *protocol.Command)
}

func (o *poolOwner) spawn(fn func()) bool {
	o.spawned.Add(1)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		fn()
	}()
	return true
}

func (o *poolOwner) dispatch(*Conn, *protocol.Command) bool      { panic("not used") }
func (o *poolOwner) serveRequest(_ *Conn, req *protocol.Command) { o.fn(req) }
func (o *poolOwner) connClosed(*Conn, error)                     {}

func newTestPool(fn func(req *protocol.Command)) (*workerPool, *poolOwner, *Conn) {
	o := &poolOwner{fn: fn}
	return &workerPool{spawn: o.spawn}, o, &Conn{owner: o}
}

// waitIdle waits until n workers are parked. A worker parks just after its
// handler returns and there is no hook for that, so it is polled; no test
// depends on how long it takes.
func waitIdle(t *testing.T, p *workerPool, n int) {
	t.Helper()
	testwait.For(t, testwait.Default, "parked workers", func() bool { return p.idleCount() == n })
}

func TestWorkerPoolReusesParkedWorker(t *testing.T) {
	done := make(chan struct{}, 1)
	p, o, c := newTestPool(func(*protocol.Command) { done <- struct{}{} })
	for i := range 5 {
		if !p.run(task{c: c, req: &protocol.Command{}}) {
			t.Fatal("run refused")
		}
		<-done
		waitIdle(t, p, 1)
		if n := o.spawned.Load(); n != 1 {
			t.Fatalf("request %d: %d goroutines started, want the one worker reused", i, n)
		}
	}
	p.close()
	o.wg.Wait()
}

// Requests never wait for a busy worker, however many are busy; once they
// finish, at most maxIdleWorkers stay parked.
func TestWorkerPoolNeverQueuesBehindBusyWorker(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	p, o, c := newTestPool(func(req *protocol.Command) {
		started.Done()
		if req.Code == codeHold {
			<-release
		}
	})
	const n = maxIdleWorkers + 10
	// Warm the pool with one parked worker, so the first held request
	// takes it and the rest must start new ones.
	started.Add(1)
	p.run(task{c: c, req: &protocol.Command{}})
	started.Wait()
	waitIdle(t, p, 1)

	started.Add(n)
	for range n {
		if !p.run(task{c: c, req: &protocol.Command{Code: codeHold}}) {
			t.Fatal("run refused")
		}
	}
	started.Wait() // every handler runs while all the others are held
	if got := o.spawned.Load(); got != n {
		t.Fatalf("%d goroutines started for %d held requests and one parked worker, want %d", got, n, n)
	}
	close(release)
	waitIdle(t, p, maxIdleWorkers)
	p.close()
	o.wg.Wait()
}

func TestWorkerPoolRetiresIdleWorkers(t *testing.T) {
	release := make(chan struct{})
	var started, done sync.WaitGroup
	p, o, c := newTestPool(func(*protocol.Command) {
		started.Done()
		<-release
		done.Done()
	})
	started.Add(3)
	done.Add(3)
	for range 3 {
		p.run(task{c: c, req: &protocol.Command{}})
	}
	started.Wait()
	close(release)
	done.Wait()
	waitIdle(t, p, 3)

	p.retire() // parked during this tick: kept
	if n := p.idleCount(); n != 3 {
		t.Fatalf("%d parked after one tick, want 3", n)
	}
	// One worker serves a request and parks again, in the new tick.
	started.Add(1)
	done.Add(1)
	p.run(task{c: c, req: &protocol.Command{}})
	done.Wait()
	waitIdle(t, p, 3)
	p.retire() // the two parked through a whole tick exit
	if n := p.idleCount(); n != 1 {
		t.Fatalf("%d parked after the second tick, want 1", n)
	}
	p.retire()
	if n := p.idleCount(); n != 0 {
		t.Fatalf("%d parked after the third tick, want 0", n)
	}
	o.wg.Wait() // every worker has exited
	if n := o.spawned.Load(); n != 3 {
		t.Fatalf("%d goroutines started, want 3", n)
	}
}

// close makes parked workers exit at once and busy ones when their handler
// returns, and refuses new requests.
func TestWorkerPoolClose(t *testing.T) {
	hold := make(chan struct{})
	held := make(chan struct{})
	done := make(chan struct{}, 1)
	p, o, c := newTestPool(func(req *protocol.Command) {
		if req.Code == 1 {
			close(held)
			<-hold
			return
		}
		done <- struct{}{}
	})
	p.run(task{c: c, req: &protocol.Command{}})
	<-done
	waitIdle(t, p, 1)
	p.run(task{c: c, req: &protocol.Command{Code: 1}}) // takes the parked worker
	<-held

	p.close()
	if p.run(task{c: c, req: &protocol.Command{}}) {
		t.Fatal("run accepted a request after close")
	}
	close(hold)
	o.wg.Wait()
	if n := p.idleCount(); n != 0 {
		t.Fatalf("%d workers parked after close", n)
	}
}

// A load of many requests in their handlers at once (an async producer's
// sends waiting on the store) is served by the same workers burst after
// burst: the second burst of as many starts no goroutine. With the former
// bound of 64 parked workers, every burst past 64 started new ones.
func TestWorkerPoolKeepsABusyMomentsWorkers(t *testing.T) {
	const n = 300
	var release chan struct{}
	var started sync.WaitGroup
	p, o, c := newTestPool(func(req *protocol.Command) {
		started.Done()
		if req.Code == codeHold {
			<-release
		}
	})
	for burst := range 2 {
		release = make(chan struct{})
		started.Add(n)
		for range n {
			if !p.run(task{c: c, req: &protocol.Command{Code: codeHold}}) {
				t.Fatal("run refused")
			}
		}
		started.Wait()
		close(release)
		waitIdle(t, p, n)
		if got := o.spawned.Load(); got != n {
			t.Fatalf("burst %d of %d held requests: %d goroutines started in all, want %d", burst+1, n, got, n)
		}
	}
	p.close()
	o.wg.Wait()
}
