// Package offsets owns the broker's consumer offset table (RocketMQ's
// ConsumerOffsetManager): the next offset each consumer group will consume
// from each queue.
//
// Invariants:
//   - commits are applied in memory at once and are never negative;
//   - Persist hands every entry changed since the last successful Persist
//     to the caller's writer, and an entry whose write fails stays dirty, so
//     the next Persist retries it;
//   - a topic's entries can be dropped as a whole (topic deleted); a dropped
//     entry is not written again.
//
// The table is pure: it imports no network or store code. The broker wires
// Persist to the store every few seconds and on shutdown.
package offsets

import (
	"cmp"
	"slices"
	"sync"
)

// Key names one queue of one topic for one group.
type Key struct {
	Group   string
	Topic   string
	QueueID int32
}

// Entry is one stored offset.
type Entry struct {
	Key
	Offset int64
}

// Table holds consumer offsets. The zero value is not usable; call New.
type Table struct {
	mu struct {
		sync.Mutex
		offsets map[Key]int64
		dirty   map[Key]struct{}
	}
}

// New returns an empty table.
func New() *Table {
	t := &Table{}
	t.mu.offsets = make(map[Key]int64)
	t.mu.dirty = make(map[Key]struct{})
	return t
}

// Load puts entries read back from storage, without marking them dirty.
func (t *Table) Load(entries []Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.loadLocked(entries)
}

func (t *Table) loadLocked(entries []Entry) {
	for _, e := range entries {
		if e.Offset >= 0 {
			t.mu.offsets[e.Key] = e.Offset
		}
	}
}

// Replace makes the table hold exactly entries, none dirty: what a new
// master does with the offsets its store holds (commits it took in memory
// as a follower are dropped; the consumers commit again).
func (t *Table) Replace(entries []Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.mu.offsets)
	clear(t.mu.dirty)
	t.loadLocked(entries)
}

// Commit records offset for k. Negative offsets are ignored (the official
// client sends -1 for a queue it never consumed); it reports whether the
// offset was recorded.
func (t *Table) Commit(k Key, offset int64) bool {
	if offset < 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.mu.offsets[k]; ok && old == offset {
		return true
	}
	t.mu.offsets[k] = offset
	t.mu.dirty[k] = struct{}{}
	return true
}

// CommitForward records offset for k only if it is ahead of the offset
// already recorded. It serves the commit piggy-backed on a pull: that value
// is the consumer's view when it sent the pull, and handlers of one
// connection run concurrently, so it can be processed after a newer explicit
// UPDATE_CONSUMER_OFFSET (a consumer's final commit at shutdown) and must not
// move the group back over messages already consumed.
func (t *Table) CommitForward(k Key, offset int64) bool {
	if offset < 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.mu.offsets[k]; ok && old >= offset {
		return old == offset
	}
	t.mu.offsets[k] = offset
	t.mu.dirty[k] = struct{}{}
	return true
}

// Get returns the offset of k.
func (t *Table) Get(k Key) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	off, ok := t.mu.offsets[k]
	return off, ok
}

// Group returns every offset of a group on topic (all topics when topic is
// empty), sorted by topic and queue.
func (t *Table) Group(group, topic string) []Entry {
	t.mu.Lock()
	var out []Entry
	for k, off := range t.mu.offsets {
		if k.Group == group && (topic == "" || k.Topic == topic) {
			out = append(out, Entry{Key: k, Offset: off})
		}
	}
	t.mu.Unlock()
	sortEntries(out)
	return out
}

// All returns every offset, sorted by group, topic and queue.
func (t *Table) All() []Entry {
	t.mu.Lock()
	out := make([]Entry, 0, len(t.mu.offsets))
	for k, off := range t.mu.offsets {
		out = append(out, Entry{Key: k, Offset: off})
	}
	t.mu.Unlock()
	sortEntries(out)
	return out
}

// GroupsOfTopic returns the groups with an offset on topic, sorted.
func (t *Table) GroupsOfTopic(topic string) []string {
	t.mu.Lock()
	seen := map[string]bool{}
	for k := range t.mu.offsets {
		if k.Topic == topic {
			seen[k.Group] = true
		}
	}
	t.mu.Unlock()
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// DropTopic forgets every offset on topic; the caller deletes them from
// storage.
func (t *Table) DropTopic(topic string) { t.drop(func(k Key) bool { return k.Topic == topic }) }

// Len returns the number of offsets held.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.offsets)
}

// Persist calls write with the entries changed since the last Persist,
// sorted. Entries write fails for stay dirty. It returns how many were
// written and the first error.
func (t *Table) Persist(write func([]Entry) (written int, err error)) (int, error) {
	t.mu.Lock()
	batch := make([]Entry, 0, len(t.mu.dirty))
	for k := range t.mu.dirty {
		batch = append(batch, Entry{Key: k, Offset: t.mu.offsets[k]})
	}
	clear(t.mu.dirty)
	t.mu.Unlock()
	if len(batch) == 0 {
		return 0, nil
	}
	sortEntries(batch)
	n, err := write(batch)
	if n < len(batch) {
		t.mu.Lock()
		for _, e := range batch[n:] {
			if _, live := t.mu.offsets[e.Key]; live {
				t.mu.dirty[e.Key] = struct{}{}
			}
		}
		t.mu.Unlock()
	}
	return n, err
}

func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.QueueID, b.QueueID))
	})
}

// DropGroup forgets every offset of a group (a deleted group).
func (t *Table) DropGroup(group string) { t.drop(func(k Key) bool { return k.Group == group }) }

// drop forgets the offsets whose key matches, persisted or not.
func (t *Table) drop(match func(Key) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.mu.offsets {
		if match(k) {
			delete(t.mu.offsets, k)
			delete(t.mu.dirty, k)
		}
	}
}
