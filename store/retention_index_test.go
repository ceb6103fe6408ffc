package store

import (
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/index"
)

// Retention deletes the index segments that lie wholly below the log's new
// start, in the same OpTruncate; lookups stay exact across the partly
// deleted segment, and Verify finds every live record indexed.
func TestRetentionDeletesIndexSegments(t *testing.T) {
	defer func(old int64) { truncateStep = old }(truncateStep)
	truncateStep = 2000 // several OpTruncates per Retain

	s, clock, _ := openMem(t)
	s.opts.FileReservedTime = -1
	s.opts.CheckpointBytes = 1500 // a segment every few appends
	var rs []PutResult
	for i := 0; i < 60; i++ {
		topic := "T"
		if i%5 == 0 {
			topic = "Gone" // deleted below: its records stay until retention
		}
		r := mustPut(t, s,
			msg(topic, int32(i%3), fmt.Sprint(i), message.PropertyKeys, fmt.Sprintf("k%d shared  k%d", i, i),
				message.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i)),
			msg(topic, 0, "no keys"))
		rs = append(rs, r[0])
	}
	if err := s.DeleteTopic("Gone"); err != nil {
		t.Fatal(err)
	}
	segments := func() (n int, lowestEnd int64) {
		lowestEnd = -1
		err := index.Segments(s.db, func(_ int64, d index.Dir) (bool, error) {
			if lowestEnd < 0 {
				lowestEnd = d.End
			}
			n++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, lowestEnd
	}
	check := func(what string, firstLive int) {
		t.Helper()
		if _, err := s.Verify(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n, lowestEnd := segments()
		if n == 0 || lowestEnd <= s.MinPhysOffset() && firstLive > 0 {
			t.Fatalf("%s: %d segments, the lowest ending at %d, log starts at %d", what, n, lowestEnd, s.MinPhysOffset())
		}
		if recs, err := s.QueryByKey("T", "shared", 100, 0, 0); err != nil || len(recs) != 4*(len(rs)-firstLive)/5 {
			t.Fatalf("%s: shared key finds %d records: %v", what, len(recs), err)
		}
		for i := firstLive; i < len(rs); i += 7 {
			topic := "T"
			if i%5 == 0 {
				continue
			}
			if recs, err := s.QueryByUniqKey(topic, fmt.Sprint("u", i), 4); err != nil || len(recs) != 1 {
				t.Fatalf("%s: unique key u%d finds %d records: %v", what, i, len(recs), err)
			}
			if recs, err := s.QueryByKey(topic, fmt.Sprint("k", i), 4, 0, 0); err != nil || len(recs) != 1 {
				t.Fatalf("%s: key k%d finds %d records: %v", what, i, len(recs), err)
			}
		}
	}
	check("before", 0)
	before, _ := segments()

	if _, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: rs[10].CommitLogOffset}); err != nil {
		t.Fatal(err)
	}
	check("truncated", 10)

	// Retention by budget, in several steps.
	s.opts.DiskBudget = s.MaxPhysOffset() - rs[40].CommitLogOffset
	if n, err := s.Retain(clock.Now()); err != nil || n <= truncateStep {
		t.Fatalf("retain: %d %v (want more than one step of %d)", n, err, truncateStep)
	}
	check("budget", 40)
	if after, _ := segments(); after >= before {
		t.Fatalf("%d segments before retention, %d after", before, after)
	}
}
