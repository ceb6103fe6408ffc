package core

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/runnelmq/runnel/store"
)

// forcedCleans counts what the store's forced cleaning (disk usage above
// diskSpaceCleanForciblyRatio) deleted since the core started: every
// message, and by consumer group the ones it had not consumed yet.
type forcedCleans struct {
	mu         sync.Mutex
	messages   int64
	unconsumed map[string]int64
}

// ForcedCleanStats is what forced cleaning deleted since the core started.
type ForcedCleanStats struct {
	// Messages counts every message deleted.
	Messages int64
	// Unconsumed counts, by consumer group, the messages deleted below
	// its committed offset's queue position: ones it never got.
	Unconsumed map[string]int64
}

// ForcedCleans returns what forced cleaning deleted since the core started.
func (c *Core) ForcedCleans() ForcedCleanStats {
	c.forced.mu.Lock()
	defer c.forced.mu.Unlock()
	return ForcedCleanStats{Messages: c.forced.messages, Unconsumed: maps.Clone(c.forced.unconsumed)}
}

// onForcedClean is the store's OnForcedClean: it counts what went and says
// so in the log, a WARN naming the groups that lost messages they had not
// consumed (their clients only see PULL_OFFSET_MOVED and jump).
func (c *Core) onForcedClean(fc store.ForcedClean) {
	var total int64
	for _, r := range fc.Queues {
		total += r.Max - r.Min
	}
	lost := map[string]int64{}
	for _, e := range c.offsets.All() {
		r, ok := fc.Queues[store.QueueID{Topic: e.Topic, ID: e.QueueID}]
		if ok && e.Offset < r.Max {
			lost[e.Group] += r.Max - max(e.Offset, r.Min)
		}
	}
	c.forced.mu.Lock()
	c.forced.messages += total
	if c.forced.unconsumed == nil {
		c.forced.unconsumed = map[string]int64{}
	}
	for g, n := range lost {
		c.forced.unconsumed[g] += n
	}
	c.forced.mu.Unlock()

	if len(lost) == 0 {
		c.log.Warn("store: disk above diskSpaceCleanForciblyRatio: deleted the oldest messages whatever their age; every consumer group had consumed them",
			"messages", total, "commitLogFrom", fc.From, "commitLogTo", fc.To)
		return
	}
	c.log.Warn("store: disk above diskSpaceCleanForciblyRatio: deleted the oldest messages whatever their age, some before consumer groups consumed them",
		"messages", total, "unconsumedByGroup", GroupCounts(lost), "commitLogFrom", fc.From, "commitLogTo", fc.To)
}

// GroupCounts is "group=n,..." in group order ("" for none): how the log
// and GET_BROKER_RUNTIME_INFO show counts by consumer group.
func GroupCounts(m map[string]int64) string {
	var b strings.Builder
	for _, g := range slices.Sorted(maps.Keys(m)) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(g)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(m[g], 10))
	}
	return b.String()
}
