package core

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// groupTable holds the consumer groups an admin configured
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, mqadmin updateSubGroup; Java
// SubscriptionGroupManager): in memory, written through to the store as
// store ops, so a replicated store carries them like topic configs.
//
// Unlike Java, a group is not given a stored config when it first
// heartbeats or pulls: a group without one behaves as
// groupconf.New says.
//
// Writers are serialised by writeMu, held across the store's write; mu
// guards the map and is held only to read or swap entries, so a pull
// looking up its group never waits for an fsync.
type groupTable struct {
	// write applies an op through the core's backend.
	write func(*store.Op) error
	now   func() int64 // ms

	// loaded is the store's GroupsVersion the table was last loaded at
	// (see Core.currentGroups).
	loaded atomic.Uint64

	writeMu sync.Mutex
	mu      struct {
		sync.RWMutex
		groups  map[string]groupconf.Config
		version topicconf.DataVersion
	}
}

func newGroupTable(write func(*store.Op) error, nowMillis func() int64) *groupTable {
	t := &groupTable{write: write, now: nowMillis}
	t.mu.groups = map[string]groupconf.Config{}
	t.mu.version = topicconf.DataVersion{Timestamp: nowMillis()}
	return t
}

// load makes the table hold exactly the configs st holds (at Open, and
// when a replica becomes master: its log wrote the store, not the table).
func (t *groupTable) load(st *store.Store) error {
	// Read before the configs: an op applied meanwhile leaves the version
	// ahead of what was loaded, so the next look loads again.
	v := st.GroupsVersion()
	cfgs, err := st.Groups()
	if err != nil {
		return fmt.Errorf("core: load subscription groups: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.mu.groups)
	for _, c := range cfgs {
		t.mu.groups[c.GroupName] = c
	}
	t.mu.version = t.mu.version.Next(t.now())
	t.loaded.Store(v)
	return nil
}

// get returns a group's config and whether it is configured.
func (t *groupTable) get(group string) (groupconf.Config, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, ok := t.mu.groups[group]
	return c, ok
}

func (t *groupTable) apply(op *store.Op, commit func()) error {
	if err := t.write(op); err != nil {
		return err
	}
	t.mu.Lock()
	commit()
	t.mu.version = t.mu.version.Next(t.now())
	t.mu.Unlock()
	return nil
}

func (t *groupTable) put(c groupconf.Config) error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	return t.apply(&store.Op{Kind: store.OpPutGroup, GroupConfig: &c}, func() { t.mu.groups[c.GroupName] = c })
}

// remove deletes a group's config; it reports whether there was one.
func (t *groupTable) remove(group string) (bool, error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if _, ok := t.get(group); !ok {
		return false, nil
	}
	return true, t.apply(&store.Op{Kind: store.OpDeleteGroup, Group: group}, func() { delete(t.mu.groups, group) })
}

func (t *groupTable) snapshot() (map[string]groupconf.Config, topicconf.DataVersion) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.mu.groups), t.mu.version
}

// Retry settings are bounded so a config cannot make a %RETRY% topic
// wider than any topic may be.
const maxRetryMaxTimes = 1 << 16

// UpdateGroup creates or replaces a consumer group's config
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, Java
// AdminBrokerProcessor.updateAndCreateSubscriptionGroup). A bad group name
// is INVALID_PARAMETER with Java's remark; so are retry settings out of
// range (Java takes any), and numbers beyond Java's 32-bit ints.
func (c *Core) UpdateGroup(g groupconf.Config, by string) error {
	if remark, ok := checkGroupName(g.GroupName); !ok {
		return refuse(InvalidArgument, remark)
	}
	switch {
	case g.RetryQueueNums < 0 || g.RetryQueueNums > maxQueueNums:
		return errorf(InvalidArgument, "retryQueueNums %d is outside 0..%d", g.RetryQueueNums, maxQueueNums)
	case g.RetryMaxTimes < -1 || g.RetryMaxTimes > maxRetryMaxTimes:
		return errorf(InvalidArgument, "retryMaxTimes %d is outside -1..%d", g.RetryMaxTimes, maxRetryMaxTimes)
	case g.ConsumeTimeoutMinute < 0 || g.ConsumeTimeoutMinute > math.MaxInt32:
		return errorf(InvalidArgument, "consumeTimeoutMinute %d is outside 0..%d", g.ConsumeTimeoutMinute, math.MaxInt32)
	case g.GroupSysFlag < math.MinInt32 || g.GroupSysFlag > math.MaxInt32:
		// Java's int, and the store keeps 32 bits.
		return errorf(InvalidArgument, "groupSysFlag %d is beyond 32 bits", g.GroupSysFlag)
	}
	if err := c.groups.put(g); err != nil {
		return fmt.Errorf("core: persist subscription group %s: %w", g.GroupName, err)
	}
	c.log.Info("broker: subscription group created or updated", "group", g.GroupName, "consumeEnable", g.ConsumeEnable,
		"retryMaxTimes", g.RetryMaxTimes, "retryQueueNums", g.RetryQueueNums, "by", by)
	return nil
}

// currentGroups returns the group table, first reloaded from the store on
// a replica that is not master when the store's group configs changed
// since it was loaded: there the raft log writes the store, not the
// table, and a slave serving pulls (slaveReadEnable) must see a group's
// consumeEnable as the master does. The master's own writes keep its
// table current, and a promotion reloads it (Promote).
func (c *Core) currentGroups() *groupTable {
	if c.be.IsLeader() {
		return c.groups
	}
	if st := c.store(); st != nil && st.GroupsVersion() != c.groups.loaded.Load() {
		// One reload for the pulls that find the table stale together
		// (writeMu has no other use on a slave: it refuses writes).
		c.groups.writeMu.Lock()
		if st.GroupsVersion() != c.groups.loaded.Load() {
			if err := c.groups.load(st); err != nil {
				c.log.Warn("broker: reload subscription groups on a slave", "err", err)
			}
		}
		c.groups.writeMu.Unlock()
	}
	return c.groups
}

// GroupConfig returns a group's config: the stored one, or the defaults
// (configured false) for a group nobody configured.
func (c *Core) GroupConfig(group string) (cfg groupconf.Config, configured bool) {
	if g, ok := c.currentGroups().get(group); ok {
		return g, true
	}
	return groupconf.New(group), false
}

// GroupConfigs returns the config of every configured group and of every
// group with a live member or a committed offset (those with the
// defaults), and the version of the configured ones.
func (c *Core) GroupConfigs() (map[string]groupconf.Config, topicconf.DataVersion) {
	table, version := c.currentGroups().snapshot()
	for _, g := range c.KnownGroups() {
		if _, ok := table[g]; !ok {
			table[g] = groupconf.New(g)
		}
	}
	return table, version
}

// checkGroupConsumable refuses the pulls of a group whose config forbids
// them, with Java's answers (PullMessageProcessor): consumeEnable false,
// or a broadcasting consumer where consumeBroadcastEnable is false.
func (c *Core) checkGroupConsumable(group string) error {
	g, ok := c.currentGroups().get(group)
	if !ok {
		return nil
	}
	if !g.ConsumeEnable {
		return errorf(Forbidden, "subscription group no permission, %s", group)
	}
	if !g.ConsumeBroadcastEnable { // the official Go client says "BroadCasting"
		if info, ok := c.clients.Group(group); ok && strings.EqualFold(info.MessageModel, groupconf.Broadcasting) {
			return errorf(Forbidden, "the consumer group[%s] can not consume by broadcast way", group)
		}
	}
	return nil
}

// maxReconsumeTimes is a retry's limit: the consumer's when it gives one
// (asked >= 0), else the group's retryMaxTimes.
func (c *Core) maxReconsumeTimes(group string, asked int32) int32 {
	if asked >= 0 {
		return asked
	}
	g, _ := c.GroupConfig(group)
	return int32(g.RetryMaxTimes)
}

// retryQueues is the queue count a group's %RETRY% topic is created with.
func (c *Core) retryQueues(group string) int {
	g, _ := c.GroupConfig(group)
	return max(g.RetryQueueNums, 1)
}
