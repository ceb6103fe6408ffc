package broker

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/remoting/protocol"
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
// registrations, shared with other goroutines (a group node's leadership
// watcher registers the whole table too).
type incrementalReg struct {
	// needFull holds the name servers (address -> true) that must get the
	// whole table next.
	needFull sync.Map
	// writable is what the last whole-table registration said of the
	// store: a change of it means every topic's perm changed.
	writable atomic.Bool

	mu      sync.Mutex
	waiters []chan struct{} // creations waiting for the next round
}

// registerChangesAndWait asks for a round and returns once a round that
// started after the call has registered (or failed to register) every
// change made before it, or the broker is stopping.
func (b *Broker) registerChangesAndWait() {
	b.mu.Lock()
	started := b.mu.started
	b.mu.Unlock()
	if !started || len(b.cfg.NamesrvAddrs) == 0 {
		return // Start registers the whole table first
	}
	done := make(chan struct{})
	b.inc.mu.Lock()
	b.inc.waiters = append(b.inc.waiters, done)
	b.inc.mu.Unlock()
	b.kickRegister()
	select {
	case <-done:
	case <-b.stop:
	}
}

// registerChanges is one round of the loop after a kick: the changed
// topics to each name server that has the rest, the whole table to those
// that need it. It returns how many name servers failed.
func (b *Broker) registerChanges(ctx context.Context) (failed int) {
	b.inc.mu.Lock()
	waiters := b.inc.waiters
	b.inc.waiters = nil
	b.inc.mu.Unlock()
	defer func() {
		for _, w := range waiters {
			close(w)
		}
	}()
	// Taken after the waiters: every change a waiter made is in it.
	changed, removed, version := b.core.TakeTopicChanges()
	writable := b.core.Store().Writable() == nil
	if removed || writable != b.inc.writable.Load() {
		return b.registerAll(ctx)
	}
	var full, partial []string
	for _, addr := range b.cfg.NamesrvAddrs {
		if _, ok := b.inc.needFull.Load(addr); ok {
			full = append(full, addr)
		} else if len(changed) > 0 {
			partial = append(partial, addr)
		}
	}
	if len(full) > 0 {
		table, v := b.core.Topics()
		if !writable {
			table, v = notWritable(table, v)
		}
		failed += b.registerFullWith(ctx, full, table, v)
	}
	if len(partial) > 0 {
		if !writable {
			changed, version = notWritable(changed, version)
		}
		for _, addr := range b.registerTopicsWith(ctx, partial, changed, version) {
			b.inc.needFull.Store(addr, true)
			failed++
		}
	}
	return failed
}

// registerFullWith registers the whole table with addrs, noting which of
// them still need it.
func (b *Broker) registerFullWith(ctx context.Context, addrs []string, table map[string]protocol.TopicConfig, v protocol.DataVersion) (failed int) {
	// Cleared first, so a connection that closes meanwhile marks it again.
	for _, addr := range addrs {
		b.inc.needFull.Delete(addr)
	}
	down := b.registerTopicsWith(ctx, addrs, table, v)
	for _, addr := range down {
		b.inc.needFull.Store(addr, true)
	}
	return len(down)
}

// namesrvNeedsFull marks a name server whose connection closed: it may
// have restarted with an empty table, so it gets the whole table next.
func (b *Broker) namesrvNeedsFull(addr string) { b.inc.needFull.Store(addr, true) }
