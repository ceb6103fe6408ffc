package client

import (
	"context"
	"errors"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The fast route refresh: when a send or a pull fails the way a moved
// master explains, the topic's route is read again at once instead of at
// the next periodic refresh (RouteRefreshInterval, 30 s by default; the
// official Go client waits for that one). Two rules keep it cheap for the
// name servers when the whole cluster is down:
//
//   - concurrent refreshes of one topic coalesce: one query runs, and every
//     caller waits for it and shares its outcome;
//   - a refresh that found nothing new makes the next one of that topic wait,
//     refreshMinGap doubling to refreshMaxGap. One that found a change, or a
//     topic quiet for refreshMaxGap past its wait, starts again with no wait.
//
// So a dead cluster gets about one query a second per topic from this path.
const (
	refreshMinGap = 50 * time.Millisecond
	refreshMaxGap = time.Second
)

// errMasterMoved is joined to the error of a request whose broker's master
// was found at another address by the refresh the failure caused: the
// caller may retry there at once.
var errMasterMoved = errors.New("client: the broker's master has moved")

// masterMayHaveMoved reports whether err is what a request sees when its
// broker stopped being the master: the connection failed (refused, reset,
// closed, timed out), the broker refused the write as a Java slave does
// (SERVICE_NOT_AVAILABLE, "... messages are put to the slave ...", from
// the put-message hook's BrokerRole.SLAVE check), or the route names no
// master (the old one left, the new one has not registered yet). Code 14
// also means a full disk; a refresh is harmless then, the broker's perm
// tells.
func masterMayHaveMoved(err error) bool {
	if errors.Is(err, ErrNoBroker) {
		return true
	}
	var be *BrokerError
	if errors.As(err, &be) {
		return be.Code == protocol.RespServiceNotAvailable
	}
	if errors.Is(err, remoting.ErrClosed) || errors.Is(err, context.Canceled) {
		return false // this client is closing, or the caller gave up
	}
	var op *net.OpError
	return errors.Is(err, remoting.ErrConnClosed) || errors.Is(err, remoting.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &op)
}

// refreshGate spaces one topic's fast refreshes; pure, the caller passes
// the time.
type refreshGate struct {
	next time.Time     // no refresh starts before this
	gap  time.Duration // the wait after the next refresh that finds nothing new
}

// wait returns how long until a refresh may start (0: now).
func (g *refreshGate) wait(now time.Time) time.Duration {
	return max(g.next.Sub(now), 0)
}

// start reports whether a refresh may start now, and if so records it.
func (g *refreshGate) start(now time.Time) bool {
	if now.Before(g.next) {
		return false
	}
	if g.gap == 0 || now.Sub(g.next) >= refreshMaxGap {
		g.gap = refreshMinGap // first one, or quiet for a while: start over
	}
	return true
}

// finish records the end of a refresh; changed says it found something
// new (then the next one needs no wait).
func (g *refreshGate) finish(now time.Time, changed bool) {
	if changed {
		g.next, g.gap = now, refreshMinGap
		return
	}
	g.next = now.Add(g.gap)
	g.gap = min(2*g.gap, refreshMaxGap)
}

// refresher runs the fast refreshes of one instance.
type refresher struct {
	now func() time.Time
	// fetch re-reads topic's route and reports whether it changed.
	fetch func(ctx context.Context, topic string) (changed bool, err error)
	// spawn runs a refresh in a goroutine its owner waits for, under ctx
	// (the instance's life) rather than under any one caller's context:
	// the callers it serves may give up at different times. It reports
	// false when the owner is stopping.
	spawn func(fn func()) bool
	ctx   context.Context

	mu struct {
		sync.Mutex
		topics map[string]*topicRefresh
	}
}

type topicRefresh struct {
	gate refreshGate
	run  *refreshRun // the refresh in flight, nil when none
}

// refreshRun is one refresh; changed and err are written before done
// closes.
type refreshRun struct {
	done    chan struct{}
	changed bool
	err     error
	callers int // callers sharing it; guarded by refresher.mu
}

func newRefresher(ctx context.Context, now func() time.Time, spawn func(func()) bool,
	fetch func(context.Context, string) (bool, error)) *refresher {
	r := &refresher{now: now, fetch: fetch, spawn: spawn, ctx: ctx}
	r.mu.topics = map[string]*topicRefresh{}
	return r
}

// refresh re-reads topic's route unless its gate says it is too soon, or
// joins the refresh in flight; it waits for the outcome (or ctx) and
// reports whether the route changed.
func (r *refresher) refresh(ctx context.Context, topic string) (changed bool, err error) {
	r.mu.Lock()
	t := r.mu.topics[topic]
	if t == nil {
		t = &topicRefresh{}
		r.mu.topics[topic] = t
	}
	run := t.run
	if run != nil {
		run.callers++
	} else {
		if !t.gate.start(r.now()) {
			r.mu.Unlock()
			return false, nil
		}
		run = &refreshRun{done: make(chan struct{}), callers: 1}
		t.run = run
		if !r.spawn(func() { r.do(topic, t, run) }) {
			t.run = nil
			r.mu.Unlock()
			return false, ErrClosed
		}
	}
	r.mu.Unlock()
	select {
	case <-run.done:
		return run.changed, run.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (r *refresher) do(topic string, t *topicRefresh, run *refreshRun) {
	run.changed, run.err = r.fetch(r.ctx, topic)
	r.mu.Lock()
	t.gate.finish(r.now(), run.err == nil && run.changed)
	t.run = nil
	r.mu.Unlock()
	close(run.done)
}

// wait returns how long until topic's next refresh may start.
func (r *refresher) wait(topic string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.mu.topics[topic]; t != nil {
		return t.gate.wait(r.now())
	}
	return 0
}

// fetchRoute is the refresher's fetch: topic's route from the name
// servers, and whether a master address or the writable queues changed.
func (in *instance) fetchRoute(ctx context.Context, topic string) (bool, error) {
	old := in.routes.get(topic)
	r, err := in.updateRoute(ctx, topic)
	if err != nil {
		return false, err
	}
	return old == nil || !maps.Equal(masters(old), masters(r)) || !slices.Equal(old.publish, r.publish), nil
}

func masters(r *topicRoute) map[string]string {
	m := make(map[string]string, len(r.data.BrokerDatas))
	for _, b := range r.data.BrokerDatas {
		m[b.BrokerName] = b.MasterAddr()
	}
	return m
}

// recoverRoute is told of the failure err of a request for topic to
// broker's master at addr. When a moved master explains it, topic's route
// is refreshed at once (see refresher); with wait, a refresh that is due
// later is waited for (within ctx) rather than skipped. It reports whether
// broker's master is now known at another address, where a retry may
// succeed at once.
func (in *instance) recoverRoute(ctx context.Context, topic, broker, addr string, err error, wait bool) bool {
	if !masterMayHaveMoved(err) {
		return false
	}
	if d := in.fast.wait(topic); wait && d > 0 && !sleep(ctx, d) {
		return false
	}
	if _, rerr := in.fast.refresh(ctx, topic); rerr != nil && ctx.Err() == nil {
		in.log.Debug("client: route refresh after a failure failed", "topic", topic, "err", rerr)
	}
	now := in.routes.masterAddr(broker)
	moved := now != "" && now != addr
	if moved {
		in.log.Info("client: broker's master moved", "broker", broker, "from", addr, "to", now, "after", err)
	}
	return moved
}

// hasOtherBroker reports whether r offers a writable queue on a broker other
// than broker: a retry may go there rather than wait for broker's route.
func hasOtherBroker(r *topicRoute, broker string) bool {
	for _, mq := range r.publish {
		if mq.BrokerName != broker {
			return true
		}
	}
	return false
}
