// Package lock owns the broker's rebalance lock table (RocketMQ's
// RebalanceLockManager): which client of a consumer group may consume a
// message queue in orderly mode.
//
// Invariants:
//   - a queue has at most one owner per group at any time;
//   - a live lock (renewed within MaxLiveTime) is never handed to another
//     client; an owner's lock request renews it;
//   - only the owner removes its entry (UnlockBatch); closing a connection
//     does not, so a consumer that reconnects keeps its queues until expiry;
//   - expiry is strict: an entry is expired when more than MaxLiveTime has
//     passed since its last renewal.
//
// The table is pure: time comes from the injected clock and it imports no
// network code. One mutex guards every batch so a batch sees one consistent
// table.
package lock

import (
	"sort"
	"sync"
	"time"
)

// Queue names one message queue.
type Queue struct {
	Topic      string
	BrokerName string
	QueueID    int32
}

// Config tunes the lock table.
type Config struct {
	// MaxLiveTime is how long a lock lives without renewal. Default 60 s,
	// RocketMQ's rocketmq.broker.rebalance.lockMaxLiveTime.
	MaxLiveTime time.Duration
}

// DefaultConfig returns the RocketMQ defaults.
func DefaultConfig() Config { return Config{MaxLiveTime: 60 * time.Second} }

type entry struct {
	clientID    string
	lastUpdated time.Time
}

// Manager is the lock table. The zero value is not usable; call New.
type Manager struct {
	maxLive time.Duration
	now     func() time.Time

	mu struct {
		sync.Mutex
		groups map[string]map[Queue]*entry
	}
}

// New returns an empty table. now defaults to time.Now.
func New(cfg Config, now func() time.Time) *Manager {
	if cfg.MaxLiveTime <= 0 {
		cfg.MaxLiveTime = DefaultConfig().MaxLiveTime
	}
	if now == nil {
		now = time.Now
	}
	m := &Manager{maxLive: cfg.MaxLiveTime, now: now}
	m.mu.groups = make(map[string]map[Queue]*entry)
	return m
}

func (m *Manager) expiredLocked(e *entry, now time.Time) bool {
	return now.Sub(e.lastUpdated) > m.maxLive
}

// TryLockBatch locks, for clientID, every queue of qs that is free, expired or
// already its own, renewing the latter, and returns the queues it now holds
// (sorted). Queues held live by another client are left out.
func (m *Manager) TryLockBatch(group string, qs []Queue, clientID string) []Queue {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	table := m.mu.groups[group]
	if table == nil {
		table = make(map[Queue]*entry, len(qs))
		m.mu.groups[group] = table
	}
	locked := make([]Queue, 0, len(qs))
	for _, q := range qs {
		e := table[q]
		switch {
		case e == nil:
			table[q] = &entry{clientID: clientID, lastUpdated: now}
		case e.clientID == clientID || m.expiredLocked(e, now):
			// Renewal of one's own lock, or takeover of an abandoned one.
			e.clientID = clientID
			e.lastUpdated = now
		default:
			continue
		}
		locked = append(locked, q)
	}
	sortQueues(locked)
	return locked
}

// UnlockBatch removes clientID's locks on qs and returns the queues it
// released. Queues owned by another client, or not locked, are untouched.
func (m *Manager) UnlockBatch(group string, qs []Queue, clientID string) []Queue {
	m.mu.Lock()
	defer m.mu.Unlock()
	table := m.mu.groups[group]
	if table == nil {
		return nil
	}
	var released []Queue
	for _, q := range qs {
		if e := table[q]; e != nil && e.clientID == clientID {
			delete(table, q)
			released = append(released, q)
		}
	}
	if len(table) == 0 {
		delete(m.mu.groups, group)
	}
	sortQueues(released)
	return released
}

// Owner returns the client holding a live lock on q in group.
func (m *Manager) Owner(group string, q Queue) (clientID string, ok bool) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.mu.groups[group][q]
	if e == nil || m.expiredLocked(e, now) {
		return "", false
	}
	return e.clientID, true
}

// IsLockAllExpired reports whether group holds no live lock.
func (m *Manager) IsLockAllExpired(group string) bool {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.mu.groups[group] {
		if !m.expiredLocked(e, now) {
			return false
		}
	}
	return true
}

// Clear drops every lock (a new master's table starts empty).
func (m *Manager) Clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.mu.groups)
}

// Sweep drops expired entries so an abandoned group does not hold memory
// forever. It changes no answer the table gives: an expired entry already
// counts as free.
func (m *Manager) Sweep() int {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for g, table := range m.mu.groups {
		for q, e := range table {
			if m.expiredLocked(e, now) {
				delete(table, q)
				n++
			}
		}
		if len(table) == 0 {
			delete(m.mu.groups, g)
		}
	}
	return n
}

func sortQueues(qs []Queue) {
	sort.Slice(qs, func(i, j int) bool {
		a, b := qs[i], qs[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.BrokerName != b.BrokerName {
			return a.BrokerName < b.BrokerName
		}
		return a.QueueID < b.QueueID
	})
}
