package registration

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/topicconf"
)

// Incremental registration (Java BrokerController.registerIncrementBrokerData).
//
// A topic change is registered by a REGISTER_BROKER whose topic table holds
// only the topics changed since the previous round, with the table's new
// data version: a name server merges the topics it is given into the
// broker's queue data and keeps the others (RouteInfoManager writes only the
// topics in the registration). The whole table still goes every
// RegisterInterval, to a name server whose last registration failed or whose
// connection closed (it may have restarted empty), after a deletion (which a
// partial table cannot say) and when the store's writability changed (every
// topic's perm changes). So a creation costs the same at 10,000 topics as at
// 10, where the whole table made it grow with the topic count.
//
// Creations that arrive together share one round: a waiting creation joins
// the next round, and the round takes every change made before it started.

// incrementalReg is the registration loop's state for partial
// registrations. needFull and waiters are shared with other goroutines;
// writable is set by every whole-table registration.
type incrementalReg struct {
	// needFull holds the name servers (address -> true) that must get the
	// whole table next.
	needFull sync.Map
	// writable is what the last whole-table registration said of the
	// store: a change of it means every topic's perm changed.
	// Atomic: besides the loop, a role change (watchLeadership) and a
	// runtime permission change register the whole table at once.
	writable atomic.Bool

	mu      sync.Mutex
	waiters []chan struct{} // creations waiting for the next round
}

// ChangesAndWait asks for a round and returns once a round that started
// after the call has registered (or failed to register) every change made
// before it, or the Registrar is stopping.
func (r *Registrar) ChangesAndWait() {
	r.mu.Lock()
	started := r.mu.started && !r.mu.stopped
	r.mu.Unlock()
	if !started || len(r.cfg.NamesrvAddrs) == 0 {
		return // Start registers the whole table first
	}
	done := make(chan struct{})
	r.inc.mu.Lock()
	r.inc.waiters = append(r.inc.waiters, done)
	r.inc.mu.Unlock()
	r.Kick()
	select {
	case <-done:
	case <-r.stop:
	}
}

// registerChanges is one round of the loop after a kick: the changed
// topics to each name server that has the rest, the whole table to those
// that need it. It returns how many name servers failed.
func (r *Registrar) registerChanges(ctx context.Context) (failed int) {
	r.inc.mu.Lock()
	waiters := r.inc.waiters
	r.inc.waiters = nil
	r.inc.mu.Unlock()
	defer func() {
		for _, w := range waiters {
			close(w)
		}
	}()
	// Taken after the waiters: every change a waiter made is in it.
	changed, removed, version := r.cfg.Broker.TakeTopicChanges()
	writable := r.cfg.Broker.Writable()
	if removed || writable != r.inc.writable.Load() {
		return r.registerAll(ctx)
	}
	var full, partial []string
	for _, addr := range r.cfg.NamesrvAddrs {
		if _, ok := r.inc.needFull.Load(addr); ok {
			full = append(full, addr)
		} else if len(changed) > 0 {
			partial = append(partial, addr)
		}
	}
	if len(full) > 0 {
		table, v := r.cfg.Broker.Topics()
		if !writable {
			table, v = notWritable(table, v)
		}
		failed += r.registerFullWith(ctx, full, table, v)
	}
	if len(partial) > 0 {
		if !writable {
			changed, version = notWritable(changed, version)
		}
		for _, addr := range r.registerTopicsWith(ctx, partial, changed, version) {
			r.inc.needFull.Store(addr, true)
			failed++
		}
	}
	return failed
}

// registerFullWith registers the whole table with addrs, noting which of
// them still need it.
func (r *Registrar) registerFullWith(ctx context.Context, addrs []string, table map[string]topicconf.Config, v topicconf.DataVersion) (failed int) {
	// Cleared first, so a connection that closes meanwhile marks it again.
	for _, addr := range addrs {
		r.inc.needFull.Delete(addr)
	}
	down := r.registerTopicsWith(ctx, addrs, table, v)
	for _, addr := range down {
		r.inc.needFull.Store(addr, true)
	}
	return len(down)
}

// namesrvNeedsFull marks a name server whose connection closed: it may
// have restarted with an empty table, so it gets the whole table next.
func (r *Registrar) namesrvNeedsFull(addr string) { r.inc.needFull.Store(addr, true) }
