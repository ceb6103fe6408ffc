package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/message"
)

func TestRetentionByAge(t *testing.T) {
	fs := vfs.NewMem()
	clock := fakeclock.New(t0)
	opts := memOptions(fs, clock)
	opts.FileReservedTime = time.Hour
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	// One message a minute for 60 minutes: queue 0 gets every message, queue
	// 1 only the first 10 minutes' (it will be emptied), queue 2 every 10th.
	var ids []string
	for i := 0; i < 60; i++ {
		clock.Set(t0.Add(time.Duration(i) * time.Minute))
		ms := []*message.MessageExt{msg("T", 0, fmt.Sprint(i), message.PropertyKeys, fmt.Sprint("k", i))}
		if i < 10 {
			ms = append(ms, msg("T", 1, fmt.Sprint(i)))
		}
		if i%10 == 0 {
			ms = append(ms, msg("T", 2, fmt.Sprint(i)))
		}
		r := mustPut(t, s, ms...)
		ids = append(ids, r[0].OffsetMsgID())
	}
	// Nothing is an hour old yet.
	if n, err := s.Retain(t0.Add(59 * time.Minute)); err != nil || n != 0 {
		t.Fatalf("early retain: %d %v", n, err)
	}
	// At 1h30 everything stored before 0h30 goes.
	n, err := s.Retain(t0.Add(90 * time.Minute))
	if err != nil || n <= 0 {
		t.Fatalf("retain: %d %v", n, err)
	}
	check := func(s *Store) {
		t.Helper()
		for _, c := range []struct {
			q        int32
			min, max int64
		}{{0, 30, 60}, {1, 10, 10}, {2, 3, 6}} {
			if s.MinOffset("T", c.q) != c.min || s.MaxOffset("T", c.q) != c.max {
				t.Errorf("queue %d: [%d, %d), want [%d, %d)", c.q, s.MinOffset("T", c.q), s.MaxOffset("T", c.q), c.min, c.max)
			}
		}
		r, _ := s.Get("T", 0, 5, 32, 0, nil)
		if r.Status != GetOffsetTooSmall || r.NextBeginOffset != 30 {
			t.Errorf("below min: %v next %d", r.Status, r.NextBeginOffset)
		}
		r, _ = s.Get("T", 0, 30, 1, 0, nil)
		if r.Status != GetFound || bodies(t, r.Messages)[0] != "30" {
			t.Errorf("at min: %v", r.Status)
		}
		r, _ = s.Get("T", 1, 0, 1, 0, nil)
		if r.Status != GetOffsetTooSmall || r.NextBeginOffset != 10 {
			t.Errorf("emptied queue below min: %v next %d", r.Status, r.NextBeginOffset)
		}
		r, _ = s.Get("T", 1, 10, 1, 0, nil)
		if r.Status != GetOffsetOverflowOne {
			t.Errorf("emptied queue at max: %v", r.Status)
		}
		if _, err := s.LookupMessageID(ids[29]); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleted message by id: %v", err)
		}
		if _, err := s.LookupMessageID(ids[30]); err != nil {
			t.Errorf("kept message by id: %v", err)
		}
		if recs, _ := s.QueryByKey("T", "k3", 10, 0, 0); len(recs) != 0 {
			t.Errorf("deleted message by key: %d", len(recs))
		}
		if recs, _ := s.QueryByKey("T", "k31", 10, 0, 0); len(recs) != 1 {
			t.Errorf("kept message by key: %d", len(recs))
		}
		if off, _ := s.OffsetByTime("T", 0, t0.UnixMilli()); off != 30 {
			t.Errorf("offset by old time: %d", off)
		}
		if _, err := s.Verify(); err != nil {
			t.Error(err)
		}
	}
	check(s)
	// The deletion and the emptied queue's floor survive a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)
	if r := mustPut(t, s, msg("T", 1, "new")); r[0].QueueOffset != 10 {
		t.Fatalf("emptied queue resumed at %d", r[0].QueueOffset)
	}
	// Retaining everything away keeps the write position.
	before := s.MaxPhysOffset()
	if _, err := s.Retain(t0.Add(100 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	if s.MinPhysOffset() != before || s.MaxPhysOffset() != before {
		t.Fatalf("empty log: [%d, %d), want %d", s.MinPhysOffset(), s.MaxPhysOffset(), before)
	}
	_ = s.Close()
	s2, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if r := mustPut(t, s2, msg("T", 0, "after")); r[0].CommitLogOffset != before || r[0].QueueOffset != 60 {
		t.Fatalf("after emptying: %+v", r[0])
	}
}

func TestRetentionByBudget(t *testing.T) {
	s, clock, _ := openMem(t)
	s.opts.FileReservedTime = -1
	var size int64
	for i := 0; i < 100; i++ {
		r := mustPut(t, s, msg("T", int32(i%4), fmt.Sprint(i)))
		size = int64(r[0].Size)
	}
	s.opts.DiskBudget = 20 * size
	if _, err := s.Retain(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := s.MaxPhysOffset() - s.MinPhysOffset(); got > 20*size || got < 19*size {
		t.Fatalf("log size %d after budget %d", got, 20*size)
	}
	total := int64(0)
	for q := int32(0); q < 4; q++ {
		total += s.MaxOffset("T", q) - s.MinOffset("T", q)
	}
	if total != 20 {
		t.Fatalf("%d messages left, want 20", total)
	}
	if _, err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

// Retention runs while writers append; offsets stay dense and consistent.
func TestRetentionConcurrentWithWrites(t *testing.T) {
	s, clock, _ := openMem(t)
	s.opts.FileReservedTime = -1
	s.opts.DiskBudget = 50_000
	stop := runWriters(3, func(_, i int) bool {
		if _, err := s.Put([]*message.MessageExt{msg("T", int32(i%3), "payload"), msg("U", 0, "x")}); err != nil {
			t.Error(err)
			return false
		}
		return true
	})
	for i := 0; i < 30; i++ {
		if _, err := s.Retain(clock.Now()); err != nil {
			t.Error(err)
		}
		time.Sleep(time.Millisecond) // let writers interleave; not a timing assertion
	}
	stop()
	if _, err := s.Retain(clock.Now()); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(); err != nil || rep.Orphans != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	if s.MaxPhysOffset()-s.MinPhysOffset() > 50_000 {
		t.Fatalf("over budget: %d", s.MaxPhysOffset()-s.MinPhysOffset())
	}
}

func TestTruncateOpValidation(t *testing.T) {
	s, _, _ := openMem(t)
	r := mustPut(t, s, msg("T", 0, "a"), msg("T", 0, "b"))
	for _, cut := range []int64{r[0].CommitLogOffset + 1, s.MaxPhysOffset() + 1} {
		if _, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: cut}); !errors.Is(err, ErrInvalidOp) {
			t.Errorf("cutoff %d: %v", cut, err)
		}
	}
	// A truncation to where the log starts is already done: two planned
	// from one state both ask for it (the race logged as "truncate to N,
	// log starts at N").
	if _, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: s.MinPhysOffset()}); err != nil || s.MinOffset("T", 0) != 0 {
		t.Fatalf("truncate to the log's start: %v, queue min %d", err, s.MinOffset("T", 0))
	}
	// A wrong hint is corrected, not trusted.
	_, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: r[1].CommitLogOffset, QueueMins: map[QueueID]int64{{Topic: "T", ID: 0}: 2}})
	if err != nil || s.MinOffset("T", 0) != 1 {
		t.Fatalf("truncate with bad hint: %v, min %d", err, s.MinOffset("T", 0))
	}
	if _, err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}
