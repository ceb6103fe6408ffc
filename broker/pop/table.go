package pop

import (
	"cmp"
	"slices"
	"sync"

	"github.com/runnelmq/runnel/internal/keyed"
	"github.com/runnelmq/runnel/store"
)

// Key names one in-flight record: group, the topic and queue the message
// was read from, its queue offset.
type Key = store.InFlightKey

// QueueKey names one queue of a consumer group's POP consumption.
type QueueKey struct {
	Group   string
	Topic   string
	QueueID int32
}

// QueueOf is the queue of a record's key.
func QueueOf(k Key) QueueKey { return QueueKey{Group: k.Group, Topic: k.Topic, QueueID: k.QueueID} }

// Entry is one record with its key.
type Entry struct {
	Key
	Record
}

// Table is the in-flight records in memory: the leader's view of what
// the store holds under the in-flight keys. The core changes a record
// only while holding its lock (LockRecords, or LockQueue for a queue's
// records), and in this order: the store op first, then the table, so
// the table never says what the store does not.
//
// Besides the records it keeps, per group and topic, how many are in
// flight, and, while someone follows it (Follow), the plain pops' records
// put since it last looked: what the due-time service indexes.
type Table struct {
	mu struct {
		sync.Mutex
		queues map[QueueKey]map[int64]Record
		topics map[groupTopic]int
		// following says Put records plain pops' records in added.
		following bool
		added     []Entry
	}
	queueLocks  keyed.Mutexes[QueueKey]
	recordLocks keyed.Mutexes[Key]
}

type groupTopic struct{ group, topic string }

// NewTable returns an empty table.
func NewTable() *Table {
	t := &Table{}
	t.mu.queues = make(map[QueueKey]map[int64]Record)
	t.mu.topics = make(map[groupTopic]int)
	return t
}

// Load replaces the table's records with es (what the store holds). A
// follower is not told of them: it follows again (Follow) to learn them.
func (t *Table) Load(es []Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.mu.queues)
	clear(t.mu.topics)
	for _, e := range es {
		t.putLocked(e.Key, e.Record)
	}
	t.mu.added = t.mu.added[:0]
}

// Get returns the record under k.
func (t *Table) Get(k Key) (Record, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.mu.queues[QueueOf(k)][k.Offset]
	return r, ok
}

// Put keeps r under k, replacing the record there.
func (t *Table) Put(k Key, r Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.putLocked(k, r)
}

func (t *Table) putLocked(k Key, r Record) {
	qk := QueueOf(k)
	q := t.mu.queues[qk]
	if q == nil {
		q = make(map[int64]Record)
		t.mu.queues[qk] = q
	}
	if _, ok := q[k.Offset]; !ok {
		t.mu.topics[groupTopic{k.Group, k.Topic}]++
	}
	q[k.Offset] = r
	if t.mu.following && !r.Orderly {
		t.mu.added = append(t.mu.added, Entry{Key: k, Record: r})
	}
}

// Delete drops the record under k.
func (t *Table) Delete(k Key) {
	t.mu.Lock()
	defer t.mu.Unlock()
	qk := QueueOf(k)
	q := t.mu.queues[qk]
	if _, ok := q[k.Offset]; !ok {
		return
	}
	delete(q, k.Offset)
	if len(q) == 0 {
		delete(t.mu.queues, qk)
	}
	gt := groupTopic{k.Group, k.Topic}
	if t.mu.topics[gt]--; t.mu.topics[gt] <= 0 {
		delete(t.mu.topics, gt)
	}
}

// DropTopic drops every record of topic (deleted: the store's op deleted
// them too).
func (t *Table) DropTopic(topic string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for qk := range t.mu.queues {
		if qk.Topic == topic {
			delete(t.mu.queues, qk)
		}
	}
	for gt := range t.mu.topics {
		if gt.topic == topic {
			delete(t.mu.topics, gt)
		}
	}
}

// Queue returns a queue's records in offset order.
func (t *Table) Queue(qk QueueKey) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.mu.queues[qk]
	out := make([]Entry, 0, len(q))
	for off, r := range q {
		out = append(out, Entry{Key: Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: off}, Record: r})
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	return out
}

// Count is how many of group's messages read from topic are in flight.
func (t *Table) Count(group, topic string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.topics[groupTopic{group, topic}]
}

// CountQueue is how many of a queue's messages are in flight.
func (t *Table) CountQueue(qk QueueKey) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.queues[qk])
}

// Len is how many records the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.mu.topics {
		n += c
	}
	return n
}

// Follow starts recording the plain pops' records put from now on
// (TakeAdded), and returns those in the table now: together, every plain
// pop's record once, with none missed in between. Following again starts
// over.
func (t *Table) Follow() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.following = true
	t.mu.added = t.mu.added[:0]
	var out []Entry
	for qk, q := range t.mu.queues {
		for off, r := range q {
			if !r.Orderly {
				out = append(out, Entry{Key: Key{Group: qk.Group, Topic: qk.Topic, QueueID: qk.QueueID, Offset: off}, Record: r})
			}
		}
	}
	return out
}

// Unfollow stops recording.
func (t *Table) Unfollow() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.following = false
	t.mu.added = nil
}

// TakeAdded returns up to max of the plain pops' records put since Follow
// or the last TakeAdded, oldest first.
func (t *Table) TakeAdded(max int) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(max, len(t.mu.added))
	out := append([]Entry(nil), t.mu.added[:n]...)
	t.mu.added = append(t.mu.added[:0], t.mu.added[n:]...)
	return out
}

// LockQueue locks a queue: pops of it, and every change to a FIFO pop's
// records, hold it.
func (t *Table) LockQueue(qk QueueKey) (unlock func()) { return t.queueLocks.Lock(qk) }

// TryLockQueue locks a queue if nobody holds it (a pop passes a queue
// another pop is reading, as Java's does).
func (t *Table) TryLockQueue(qk QueueKey) (unlock func(), ok bool) { return t.queueLocks.TryLock(qk) }

// LockRecords locks the records under keys (in one order whatever the
// order given, so two callers never deadlock): an ack, a change of
// invisible time or a redelivery of a plain pop's records holds them.
func (t *Table) LockRecords(keys []Key) (unlock func()) {
	ks := slices.Clone(keys)
	slices.SortFunc(ks, compareKeys)
	ks = slices.Compact(ks)
	unlocks := make([]func(), len(ks))
	for i, k := range ks {
		unlocks[i] = t.recordLocks.Lock(k)
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic),
		cmp.Compare(a.QueueID, b.QueueID), cmp.Compare(a.Offset, b.Offset))
}
