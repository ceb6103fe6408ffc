package core

import "time"

// A replicated core is master while its backend leads the group and a
// slave otherwise; a single broker's core is master from Open on. The
// broker calls Promote when its replica is announced leader (its store then
// holds every committed entry) and Demote when it is not any more.
//
// What a master runs and a slave does not: the delay and timer delivery,
// the transaction checks and the consumer offset persistence (they all
// write); a slave refuses writes (backend.go) and serves reads.
//
// Orderly locks are not replicated. Java's RebalanceLockManager keeps them
// in memory only, and a master that took over would grant at once a queue
// whose lock a consumer still holds from the old master (it believes so
// for up to the client's 30 s lock validity), so two consumers would
// consume one queue out of order. Replicating the table would put every
// consumer's lock renewal (every 20 s, per queue) through the log, and its
// expiry reads the clock, which replicas do not share. Instead a new master
// refuses locks (answers that none were locked, which the clients retry)
// for one LockMaxLiveTime: by then every lock the old master granted has
// run out, renewed nowhere. Orderly consumption pauses that long after a
// failover; concurrent consumption does not.

// Promote makes this core master: it reloads the topic table and consumer
// offsets from the store (written by the log meanwhile), creates missing
// system topics, fences orderly locks for LockMaxLiveTime, and starts the
// delay and timer delivery. It is a no-op on a single broker's core.
func (c *Core) Promote() error {
	if _, local := c.be.(LocalBackend); local {
		return nil
	}
	c.lockFence.Store(c.cfg.Now().Add(c.cfg.LockMaxLiveTime).UnixNano())
	c.locks.Clear()
	if err := c.reload(); err != nil {
		return err
	}
	c.cfg.TopicsChanged(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.started || c.mu.draining {
		return nil // Start starts the services
	}
	return c.startServicesLocked()
}

// Demote makes this core a slave: the delay and timer delivery stop, and
// held pulls are answered now (from this node's store), so their consumers
// pull again and learn the new master from their route.
func (c *Core) Demote() {
	if _, local := c.be.(LocalBackend); local {
		return
	}
	c.mu.Lock()
	c.stopServicesLocked()
	c.mu.Unlock()
	c.holds.WakeAll()
}

// startServicesLocked starts delay and timer delivery unless running.
func (c *Core) startServicesLocked() error {
	if c.mu.services {
		return nil
	}
	if err := c.startDue(); err != nil {
		return err
	}
	c.mu.services = true
	return nil
}

func (c *Core) stopServicesLocked() {
	if !c.mu.services {
		return
	}
	c.closeDue()
	c.mu.services = false
}

// locksFenced says whether a new master still refuses orderly locks.
func (c *Core) locksFenced() bool {
	return c.cfg.Now().UnixNano() < c.lockFence.Load()
}

// LockFenceUntil is when a new master starts granting orderly locks again
// (zero when it never refused any).
func (c *Core) LockFenceUntil() time.Time {
	if n := c.lockFence.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Role is the core's replication role for admin answers.
func (c *Core) Role() string {
	if c.be.IsLeader() {
		return "MASTER"
	}
	return "SLAVE"
}
