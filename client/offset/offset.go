package offset

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/queue"
)

// NoOffset is the offset returned when none is recorded, as in RocketMQ.
const NoOffset int64 = -1

// ReadType says where Store.Read looks, RocketMQ's ReadOffsetType.
type ReadType int

const (
	// ReadFromMemory returns the in-memory offset or NoOffset.
	ReadFromMemory ReadType = iota
	// ReadFromStore reads the backing store (file or broker) and, if an
	// offset is found there, also sets it in memory.
	ReadFromStore
	// ReadMemoryThenStore returns the in-memory offset if there is one and
	// reads the store otherwise.
	ReadMemoryThenStore
)

func (t ReadType) String() string {
	switch t {
	case ReadFromMemory:
		return "memory"
	case ReadFromStore:
		return "store"
	case ReadMemoryThenStore:
		return "memory-then-store"
	}
	return fmt.Sprintf("ReadType(%d)", int(t))
}

// ErrBadReadType means Read was given an unknown ReadType.
var ErrBadReadType = errors.New("offset: unknown read type")

// Store keeps a consumer group's offsets: updated in memory as messages are
// consumed, persisted in batches, read back when a queue is assigned.
type Store interface {
	// Load reads the persisted offsets into memory (at start).
	Load(ctx context.Context) error
	// Update sets mq's in-memory offset; with increaseOnly, only if it
	// moves forward (a late commit from a slow consumer must not rewind).
	Update(mq queue.MessageQueue, offset int64, increaseOnly bool)
	// Read returns mq's offset as t directs, or NoOffset if none is
	// recorded there. An error means the store could not be read, which is
	// not the same as "no offset": the caller must not fall back to a
	// consume-from policy on error.
	Read(ctx context.Context, mq queue.MessageQueue, t ReadType) (int64, error)
	// Persist writes the in-memory offsets of mqs to the store.
	Persist(ctx context.Context, mqs []queue.MessageQueue) error
	// Remove forgets mq's in-memory offset (the queue was reassigned).
	Remove(mq queue.MessageQueue)
	// Snapshot copies the in-memory offsets of topic, or of all topics
	// when topic is "".
	Snapshot(topic string) map[queue.MessageQueue]int64
}

// Table is the in-memory offset table shared by Store implementations. The
// zero value is empty and ready; it is safe for concurrent use.
type Table struct {
	mu sync.Mutex
	m  map[queue.MessageQueue]int64
}

// Update sets mq's offset; with increaseOnly it never lowers an existing
// one. It reports whether the stored value changed.
func (t *Table) Update(mq queue.MessageQueue, offset int64, increaseOnly bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[queue.MessageQueue]int64{}
	}
	old, ok := t.m[mq]
	if ok && (old == offset || increaseOnly && offset < old) {
		return false
	}
	t.m[mq] = offset
	return true
}

// Get returns mq's offset and whether it has one.
func (t *Table) Get(mq queue.MessageQueue) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	off, ok := t.m[mq]
	return off, ok
}

// Remove forgets mq.
func (t *Table) Remove(mq queue.MessageQueue) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, mq)
}

// Snapshot copies the offsets of topic, or all when topic is "".
func (t *Table) Snapshot(topic string) map[queue.MessageQueue]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[queue.MessageQueue]int64, len(t.m))
	for mq, off := range t.m {
		if topic == "" || mq.Topic == topic {
			out[mq] = off
		}
	}
	return out
}

// ConsumeFrom is where a consumer group with no recorded offset for a queue
// starts, RocketMQ's ConsumeFromWhere. "No recorded offset" is the
// broker's answer, not the group's history: a RocketMQ broker (and Runnel)
// answers QUERY_CONSUMER_OFFSET for a group it has never seen with 0, not
// QUERY_NOT_FOUND, while the queue is young (min offset 0 and, for Java,
// its first message still in memory), so there a new group starts at 0;
// the policy takes effect once a queue's oldest messages are gone (and, on
// Runnel, on an empty queue).
type ConsumeFrom int

const (
	// ConsumeFromLastOffset starts at the queue's current end: only new
	// messages. RocketMQ's default.
	ConsumeFromLastOffset ConsumeFrom = iota
	// ConsumeFromFirstOffset starts at offset 0.
	ConsumeFromFirstOffset
	// ConsumeFromTimestamp starts at the first message stored at or after
	// the consumer's consume timestamp.
	ConsumeFromTimestamp
)

// StartKind says how to resolve a Start.
type StartKind int

const (
	// StartAtOffset: start at Start.Offset.
	StartAtOffset StartKind = iota
	// StartAtMaxOffset: ask the broker for the queue's max offset and
	// start there.
	StartAtMaxOffset
	// StartAtTimestamp: ask the broker for the offset of the consume
	// timestamp and start there.
	StartAtTimestamp
)

// Start is where to begin pulling a newly assigned queue.
type Start struct {
	Kind   StartKind
	Offset int64 // for StartAtOffset
}

// ErrBadStoredOffset means the stored offset read for a queue is below
// NoOffset, which RocketMQ treats as a failed query rather than a new group.
var ErrBadStoredOffset = errors.New("offset: stored offset is invalid")

// PlanStart decides where to start pulling mq given the offset read from the
// store (ReadFromStore) and the group's policy, exactly as RocketMQ's
// computePullFromWhere: a recorded offset always wins; otherwise a retry
// topic starts at 0 under ConsumeFromLastOffset and at its max offset under
// ConsumeFromTimestamp, and other topics follow the policy.
func PlanStart(from ConsumeFrom, stored int64, mq queue.MessageQueue) (Start, error) {
	switch {
	case stored >= 0:
		return Start{Kind: StartAtOffset, Offset: stored}, nil
	case stored != NoOffset:
		return Start{}, fmt.Errorf("%w: %d for %v", ErrBadStoredOffset, stored, mq)
	}
	retry := queue.IsRetryTopic(mq.Topic)
	switch from {
	case ConsumeFromLastOffset:
		if retry {
			return Start{Kind: StartAtOffset, Offset: 0}, nil
		}
		return Start{Kind: StartAtMaxOffset}, nil
	case ConsumeFromFirstOffset:
		return Start{Kind: StartAtOffset, Offset: 0}, nil
	case ConsumeFromTimestamp:
		if retry {
			return Start{Kind: StartAtMaxOffset}, nil
		}
		return Start{Kind: StartAtTimestamp}, nil
	}
	return Start{}, fmt.Errorf("offset: unknown ConsumeFrom %d", int(from))
}

// TimestampLayout is RocketMQ's consumeTimestamp format, yyyyMMddHHmmss.
const TimestampLayout = "20060102150405"

// ParseConsumeTimestamp parses a consumeTimestamp in loc (Java uses the
// machine's zone, so pass time.Local to agree with it).
func ParseConsumeTimestamp(s string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	t, err := time.ParseInLocation(TimestampLayout, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("offset: consume timestamp %q is not yyyyMMddHHmmss: %w", s, err)
	}
	return t, nil
}

// DefaultConsumeTimestamp is RocketMQ's default consumeTimestamp: half an
// hour before now, formatted in now's zone.
func DefaultConsumeTimestamp(now time.Time) string {
	return now.Add(-30 * time.Minute).Format(TimestampLayout)
}
