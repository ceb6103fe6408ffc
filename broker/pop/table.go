package pop

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"

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
// flight and a due-time index of the plain pops' records (TakeDue).
type Table struct {
	mu struct {
		sync.Mutex
		queues map[QueueKey]map[int64]Record
		topics map[groupTopic]*topicState
	}
	queueLocks  keyedLocks[QueueKey]
	recordLocks keyedLocks[Key]
}

type groupTopic struct{ group, topic string }

type topicState struct {
	n   int
	due dueHeap
}

// NewTable returns an empty table.
func NewTable() *Table {
	t := &Table{}
	t.mu.queues = make(map[QueueKey]map[int64]Record)
	t.mu.topics = make(map[groupTopic]*topicState)
	return t
}

// Load replaces the table's records with es (what the store holds).
func (t *Table) Load(es []Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.mu.queues)
	clear(t.mu.topics)
	for _, e := range es {
		t.putLocked(e.Key, e.Record)
	}
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
	gt := groupTopic{k.Group, k.Topic}
	ts := t.mu.topics[gt]
	if ts == nil {
		ts = &topicState{}
		t.mu.topics[gt] = ts
	}
	if _, ok := q[k.Offset]; !ok {
		ts.n++
	}
	q[k.Offset] = r
	if !r.Orderly {
		heap.Push(&ts.due, dueEntry{due: r.InvisibleUntil, queueID: k.QueueID, offset: k.Offset, popTime: r.PopTime})
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
	if ts := t.mu.topics[gt]; ts != nil {
		if ts.n--; ts.n == 0 {
			delete(t.mu.topics, gt) // its due entries are all stale
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
	if ts := t.mu.topics[groupTopic{group, topic}]; ts != nil {
		return ts.n
	}
	return 0
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
	for _, ts := range t.mu.topics {
		n += ts.n
	}
	return n
}

// TakeDue removes from the due-time index and returns up to max plain
// pops' records of group and topic whose invisible time ended at or
// before now, earliest first. A record acknowledged or changed since it
// was indexed is not returned. The caller redelivers each, or gives it
// back with Requeue.
func (t *Table) TakeDue(group, topic string, now int64, max int) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.takeDueLocked(groupTopic{group, topic}, now, max, nil)
}

// TakeAllDue is TakeDue over every group and topic.
func (t *Table) TakeAllDue(now int64, max int) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Entry
	for gt := range t.mu.topics {
		if len(out) >= max {
			break
		}
		out = t.takeDueLocked(gt, now, max-len(out), out)
	}
	return out
}

func (t *Table) takeDueLocked(gt groupTopic, now int64, max int, out []Entry) []Entry {
	ts := t.mu.topics[gt]
	if ts == nil {
		return out
	}
	for n := 0; n < max && len(ts.due) > 0 && ts.due[0].due <= now; {
		e := heap.Pop(&ts.due).(dueEntry)
		k := Key{Group: gt.group, Topic: gt.topic, QueueID: e.queueID, Offset: e.offset}
		r, ok := t.mu.queues[QueueOf(k)][e.offset]
		if !ok || r.Orderly || r.PopTime != e.popTime || r.InvisibleUntil != e.due {
			continue // acknowledged, or changed since (indexed again then)
		}
		out = append(out, Entry{Key: k, Record: r})
		n++
	}
	return out
}

// Requeue indexes again a record TakeDue returned that could not be
// redelivered now, if it is still in flight as it was.
func (t *Table) Requeue(e Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.mu.queues[QueueOf(e.Key)][e.Offset]
	ts := t.mu.topics[groupTopic{e.Group, e.Topic}]
	if !ok || ts == nil || r.PopTime != e.PopTime {
		return
	}
	heap.Push(&ts.due, dueEntry{due: r.InvisibleUntil, queueID: e.QueueID, offset: e.Offset, popTime: r.PopTime})
}

// NextDue is the earliest invisible-time end of a plain pop's record of
// group and topic still indexed (0 when none): a bound, as the entry may
// have been acknowledged since.
func (t *Table) NextDue(group, topic string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts := t.mu.topics[groupTopic{group, topic}]; ts != nil && len(ts.due) > 0 {
		return ts.due[0].due
	}
	return 0
}

// LockQueue locks a queue: pops of it, and every change to a FIFO pop's
// records, hold it.
func (t *Table) LockQueue(qk QueueKey) (unlock func()) { return t.queueLocks.lock(qk) }

// TryLockQueue locks a queue if nobody holds it (a pop passes a queue
// another pop is reading, as Java's does).
func (t *Table) TryLockQueue(qk QueueKey) (unlock func(), ok bool) { return t.queueLocks.tryLock(qk) }

// LockRecords locks the records under keys (in one order whatever the
// order given, so two callers never deadlock): an ack, a change of
// invisible time or a redelivery of a plain pop's records holds them.
func (t *Table) LockRecords(keys []Key) (unlock func()) {
	ks := slices.Clone(keys)
	slices.SortFunc(ks, compareKeys)
	ks = slices.Compact(ks)
	unlocks := make([]func(), len(ks))
	for i, k := range ks {
		unlocks[i] = t.recordLocks.lock(k)
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

// dueEntry is one plain pop's record in a group and topic's due-time
// index; stale once the record is gone or has another pop time.
type dueEntry struct {
	due     int64
	queueID int32
	offset  int64
	popTime int64
}

type dueHeap []dueEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
