package core

import (
	"fmt"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// A plain pop's message not acknowledged within its invisible time comes
// back (Java's PopReviveService): a copy goes to the group's retry topic
// for the topic, %RETRY%<group>_<topic>, with its reconsume count raised,
// or to the group's %DLQ% once it was reconsumed as often as the group
// allows; then its in-flight record goes. The copy is written before the
// record is deleted, so a crash or a failover between the two brings the
// message back twice, never not at all.
//
// What brings messages back today is a pop of the group and topic (each
// pop first brings back what fell due, up to reviveOnPop), and a held pop
// waits no longer than the first record it could bring back. The due-time
// service (broker/due) is to run ReviveDue as its third source.

// reviveDue brings back group's messages read from topics whose invisible
// time passed by now, at most limit; it returns how many.
func (c *Core) reviveDue(group string, topics []string, now time.Time, limit int) int {
	n := 0
	for _, t := range topics {
		for _, e := range c.inflight.TakeDue(group, t, now.UnixMilli(), limit-n) {
			if c.revive(e, now) {
				n++
			}
		}
	}
	return n
}

// ReviveDue brings back every group's messages whose invisible time passed
// on the core's clock, at most limit, and returns how many it brought
// back (a slave brings back none).
func (c *Core) ReviveDue(limit int) int {
	if !c.be.IsLeader() {
		return 0
	}
	now := c.cfg.Now()
	n := 0
	for _, e := range c.inflight.TakeAllDue(now.UnixMilli(), limit) {
		if c.revive(e, now) {
			n++
		}
	}
	return n
}

// revive brings back one message whose invisible time passed, holding its
// record's lock; a record acknowledged or changed since it was taken is
// left alone. A failed write leaves the record in flight, indexed again.
func (c *Core) revive(e pop.Entry, now time.Time) bool {
	unlock := c.inflight.LockRecords([]pop.Key{e.Key})
	defer unlock()
	rec, ok := c.inflight.Get(e.Key)
	if !ok || rec.PopTime != e.PopTime || rec.InvisibleUntil > now.UnixMilli() {
		return false
	}
	if err := c.reviveLocked(e.Key, rec); err != nil {
		c.log.Warn("broker: bring back a message not acknowledged in time", "group", e.Group, "topic", e.Topic,
			"queue", e.QueueID, "offset", e.Offset, "err", err)
		c.inflight.Requeue(e)
		return false
	}
	return true
}

func (c *Core) reviveLocked(k pop.Key, rec pop.Record) error {
	m, err := c.readInFlight(k, rec)
	if e, ok := ReasonOf(err); ok && e.Reason == NoMessage {
		c.log.Warn("broker: a message in flight is no longer stored; dropped", "group", k.Group, "topic", k.Topic,
			"queue", k.QueueID, "offset", k.Offset, "err", err)
	} else if err != nil {
		return err
	} else {
		retry := pop.RetryTopic(k.Group, pop.OriginTopic(k.Group, k.Topic))
		if _, err := c.ensureRetryTopic(retry, k.Group, "pop"); err != nil {
			return err
		}
		props := map[string]string{}
		if m.Property(message.PropertyFirstPopTime) == "" {
			props[message.PropertyFirstPopTime] = strconv.FormatInt(rec.PopTime, 10)
		}
		g, _ := c.GroupConfig(k.Group)
		if err := c.giveBack(m, giveBack{group: k.Group, retryTopic: retry, maxTimes: popMaxTimes(g.RetryMaxTimes), props: props}); err != nil {
			return err
		}
	}
	if err := c.apply(&store.Op{Kind: store.OpInFlight, InFlightDelete: []store.InFlightKey{k}}); err != nil {
		return err
	}
	c.inflight.Delete(k)
	return nil
}

// loadInFlight makes the in-flight table hold what st holds (at Open, and
// when a replica becomes master). A record that does not decode is
// dropped from the table and logged: it cannot be acknowledged, and its
// message is not brought back.
func (c *Core) loadInFlight(st *store.Store) error {
	var es []pop.Entry
	bad := 0
	err := st.RangeInFlight(func(r store.InFlight) bool {
		rec, err := pop.DecodeRecord(r.Value)
		if err != nil {
			bad++
			return true
		}
		es = append(es, pop.Entry{Key: r.InFlightKey, Record: rec})
		return true
	})
	if err != nil {
		return fmt.Errorf("core: load messages in flight: %w", err)
	}
	if bad > 0 {
		c.log.Warn("broker: in-flight records that do not decode were skipped", "count", bad)
	}
	c.inflight.Load(es)
	return nil
}
