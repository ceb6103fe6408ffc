package store

import (
	"bytes"
	"fmt"
	"github.com/cockroachdb/pebble/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// appendOp builds the OpAppend that Put would build for ms at ts.
func appendOp(t testing.TB, ts int64, ms ...*message.MessageExt) *Op {
	t.Helper()
	op := &Op{Kind: OpAppend, Timestamp: ts}
	for _, m := range ms {
		rec, err := message.AppendStoredMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		op.Messages = append(op.Messages, AppendMessage{Record: rec, Topic: m.Topic, QueueID: m.QueueID,
			TagsCode: message.TagsHashCode(m.Tags()), Keys: m.Keys(), UniqKey: m.UniqKey()})
	}
	return op
}

// One recorded sequence of Ops, applied typed to one store and encoded
// (as a raft follower would) to another that differs in flush mode,
// memtable size and when Pebble flushes, leaves byte-identical key spaces
// and identical results: what a replicated log needs. The first
// store gets retention's planned OpTruncate with its hints, the second the
// bare cutoff, so hints cannot change the outcome either.
func TestApplyIsDeterministic(t *testing.T) {
	open := func(mode FlushMode, memtable uint64) *Store {
		opts := memOptions(vfs.NewMem(), fakeclock.New(t0))
		opts.FlushMode, opts.MemTableSize = mode, memtable
		s := mustOpen(t, opts)
		return s
	}
	a, b := open(SyncFlush, 1<<20), open(AsyncFlush, 64<<20)

	ts := t0.UnixMilli()
	var ops []*Op
	var results []*ApplyResult
	apply := func(op *Op) *ApplyResult {
		t.Helper()
		r, err := a.Apply(op)
		if err != nil {
			t.Fatalf("op %d (%d): %v", len(ops), op.Kind, err)
		}
		ops, results = append(ops, op), append(results, r)
		return r
	}
	body := strings.Repeat("b", 2000) // enough data to flush a 1 MiB memtable
	var cut int64
	for i := 0; i < 900; i++ {
		ts += int64(i%7) - 2 // sometimes backwards: store time is raised
		topic := []string{"A", "B", "C"}[i%3]
		ms := []*message.MessageExt{msg(topic, int32(i%4), fmt.Sprint(i, body[:i%2000]),
			message.PropertyKeys, fmt.Sprintf("k%d k%d", i, i%10), message.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i),
			message.PropertyTags, fmt.Sprint("tag", i%3))}
		if i%9 == 0 {
			for j := 0; j < 5; j++ {
				ms = append(ms, msg(topic, int32(j), fmt.Sprint("batch", i, j)))
			}
		}
		r := apply(appendOp(t, ts, ms...))
		if i == 300 {
			cut = r.Appended[0].PhysOffset
		}
		switch i % 50 {
		case 10:
			apply(&Op{Kind: OpCommitOffset, Offsets: []OffsetCommit{{Group: "g", Topic: topic, QueueID: int32(i % 4), Offset: int64(i)}}})
			apply(&Op{Kind: OpCommitOffset, Offsets: []OffsetCommit{{Group: "h", Topic: "C", QueueID: 1, Offset: int64(i)}, {Group: "h", Topic: "A", QueueID: 2, Offset: int64(i + 1)}}})
		case 20:
			apply(&Op{Kind: OpPutTopic, TopicConfig: &topicconf.Config{TopicName: topic, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}})
			apply(&Op{Kind: OpSetDelayOffset, Level: int32(i % 18), Offset: int64(i)})
		case 30:
			apply(&Op{Kind: OpPutCheckpoint, Name: "cp", Value: []byte(fmt.Sprint(i))})
		case 40:
			if i == 490 {
				apply(&Op{Kind: OpDeleteTopic, Topic: "C"}) // C is re-created by the next append
				apply(&Op{Kind: OpDeleteGroupOffsets, Group: "g"})
			}
		}
		if i == 600 {
			// Retention to the record appended at i == 300, planned on a.
			a.opts.DiskBudget = a.MaxPhysOffset() - cut
			a.opts.FileReservedTime = -1
			op, _, err := a.planTruncate(time.Time{})
			if err != nil || op == nil || op.Cutoff != cut {
				t.Fatalf("planned truncate %v, want cutoff %d: %v", op, cut, err)
			}
			apply(op)
			ops[len(ops)-1] = &Op{Kind: OpTruncate, Cutoff: cut}
		}
		if i == 450 {
			if err := a.log.Flush(); err != nil { // some of a in sstables, b all in its memtable
				t.Fatal(err)
			}
		}
	}
	for i, op := range ops {
		r, err := b.ApplyEncoded(op.Marshal()) // as a raft follower would
		if err != nil {
			t.Fatalf("replay op %d: %v", i, err)
		}
		if !reflect.DeepEqual(r, results[i]) {
			t.Fatalf("op %d: result %+v, first store %+v", i, r, results[i])
		}
	}
	if a.MinPhysOffset() != cut || a.MinOffset("C", 0) != 0 {
		t.Fatalf("sequence did not truncate or re-create as intended: min phys %d, C/0 min %d", a.MinPhysOffset(), a.MinOffset("C", 0))
	}
	n := sameKeys(t, a, b)
	t.Logf("%d ops, %d identical keys", len(ops), n)
	if !reflect.DeepEqual(a.Queues(), b.Queues()) || a.MaxPhysOffset() != b.MaxPhysOffset() || a.MinPhysOffset() != b.MinPhysOffset() {
		t.Fatal("in-memory state differs")
	}
}

// sameKeys fails t unless both databases of a and b hold the same keys
// and values, and returns how many there are.
func sameKeys(t *testing.T, a, b *Store) int {
	t.Helper()
	n := 0
	for _, dbs := range [][2]*pebble.DB{{a.log, b.log}, {a.db, b.db}} {
		ia, err := dbs[0].NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ia.Close() // before the stores close, also when t fails
		ib, err := dbs[1].NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ib.Close()
		oka, okb := ia.First(), ib.First()
		for ; oka && okb; oka, okb = ia.Next(), ib.Next() {
			if !bytes.Equal(ia.Key(), ib.Key()) || !bytes.Equal(ia.Value(), ib.Value()) {
				t.Fatalf("key %d differs: %q=%q vs %q=%q", n, ia.Key(), trunc(ia.Value()), ib.Key(), trunc(ib.Value()))
			}
			n++
		}
		if oka || okb {
			t.Fatalf("after %d equal keys one store has more: %v %v", n, oka, okb)
		}
	}
	return n
}

func trunc(b []byte) []byte { return b[:min(len(b), 40)] }
