package remoting

import (
	"sync"
	"time"

	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// workerPool runs a Server's request handlers on goroutines that outlive
// one request.
//
// Why: a goroutine starts with a small stack, and a request's path (handler,
// then encoding the reply) needs more, so a goroutine per request grew (that
// is, copied) its stack on every request: ~21% of the server's CPU in the
// RoundTrip benchmark, more for real handlers with deeper stacks. A worker
// keeps the stack it grew for the requests that follow.
//
// Invariants:
//   - A request never waits for another: it goes to a parked worker or, when
//     none is parked, to a new one. A handler that holds its request (a
//     long-polled pull that blocks) occupies one worker and delays nobody.
//   - At most maxIdleWorkers are parked; a worker finishing while that many
//     are parked exits, so a burst beyond it costs what a goroutine per
//     request did.
//   - A worker parked through two retire ticks (between workerIdleTimeout
//     and twice that) exits, so the workers of a past burst do not stay.
//   - Once closed, run refuses every request and parked workers are told to
//     exit; busy ones exit when their handler returns. Every worker is
//     started through the owner's spawn, so the owner's Close waits for it.
type workerPool struct {
	spawn func(func()) bool // the owner's: a goroutine its Close waits for

	mu struct {
		sync.Mutex
		// idle holds the parked workers, the most recently parked last:
		// run takes the last (its stack is most likely still grown, and
		// the least recently used drift to the front, where retire finds
		// them). parkedAt is therefore non-decreasing along it.
		idle   []*worker
		epoch  uint64 // retire ticks so far
		closed bool
	}
}

// maxIdleWorkers bounds the parked workers of one Server: as many as the
// requests a busy server has in its handlers at once, so that a steady
// load never pays for new goroutines. With 64 (the bound before), 16
// asynchronous producers of 64 sends in flight each (`runnelctl bench
// produce --async`) kept about 1,000 handlers waiting on the store, and
// the ones past 64 were new goroutines growing their stacks: 12.6% of the
// broker's CPU in newstack, 3.0% with this bound. What a burst leaves
// parked is bounded by it and gone within two retire ticks; a parked
// worker's stack also shrinks at garbage collection while it is unused.
const maxIdleWorkers = 1024

// workerIdleTimeout is the retire tick: a worker parked for two ticks exits.
const workerIdleTimeout = 5 * time.Second

// worker is one pooled goroutine.
type worker struct {
	// tasks hands the worker its next request; the zero task tells it to
	// exit. One slot: only whoever took the worker off idle sends, once.
	tasks    chan task
	parkedAt uint64 // epoch at which it parked; guarded by workerPool.mu
}

// task is one request to serve on its connection.
type task struct {
	c   *Conn
	req *protocol.Command
	// run, if set, is a run of requests to serve together (run.go), and
	// frames the pooled frames they were decoded from.
	run    []*protocol.Command
	frames [][]byte
}

// run serves t on a parked worker, or a new one when none is parked. It
// returns false without serving t when the pool is closed.
func (p *workerPool) run(t task) bool {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return false
	}
	if n := len(p.mu.idle); n > 0 {
		w := p.mu.idle[n-1]
		p.mu.idle[n-1] = nil
		p.mu.idle = p.mu.idle[:n-1]
		p.mu.Unlock()
		w.tasks <- t // never blocks: w was parked, so its slot is empty
		return true
	}
	p.mu.Unlock()
	w := &worker{tasks: make(chan task, 1)}
	return p.spawn(func() { p.work(w, t) })
}

// work is a worker's life: serve, park, wait for the next task or exit.
func (p *workerPool) work(w *worker, t task) {
	for {
		if t.run != nil {
			t.c.serveRun(t.run, t.frames)
		} else {
			t.c.serve(t.req)
		}
		if !p.park(w) {
			return
		}
		if t = <-w.tasks; t.c == nil {
			return
		}
	}
}

// idleCount is how many workers are parked.
func (p *workerPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.idle)
}

// park puts w on the idle list, or returns false when it should exit
// instead.
func (p *workerPool) park(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed || len(p.mu.idle) >= maxIdleWorkers {
		return false
	}
	w.parkedAt = p.mu.epoch
	p.mu.idle = append(p.mu.idle, w)
	return true
}

// retire advances the epoch and tells the workers parked since before the
// previous tick to exit.
func (p *workerPool) retire() {
	p.mu.Lock()
	p.mu.epoch++
	n := 0
	for n < len(p.mu.idle) && p.mu.idle[n].parkedAt+1 < p.mu.epoch {
		n++
	}
	stale := make([]*worker, n)
	copy(stale, p.mu.idle)
	k := copy(p.mu.idle, p.mu.idle[n:])
	clear(p.mu.idle[k:])
	p.mu.idle = p.mu.idle[:k]
	p.mu.Unlock()
	for _, w := range stale {
		w.tasks <- task{}
	}
}

// retireLoop runs retire every workerIdleTimeout until stop is closed.
func (p *workerPool) retireLoop(stop <-chan struct{}) {
	periodic.Run(stop, workerIdleTimeout, p.retire)
}

// close refuses further requests and tells the parked workers to exit.
func (p *workerPool) close() {
	p.mu.Lock()
	p.mu.closed = true
	idle := p.mu.idle
	p.mu.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		w.tasks <- task{}
	}
}
