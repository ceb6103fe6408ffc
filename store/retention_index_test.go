package store

import (
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store/index"
)

// Retention deletes the index entries of the records it deletes, in the
// same OpTruncate, whether the planner's hint covers them, covers only
// part of them, or is missing; a hint naming live records' entries is not
// trusted.
func TestRetentionDeletesIndexEntries(t *testing.T) {
	defer func(old int64) { truncateStep = old }(truncateStep)
	truncateStep = 2000 // several OpTruncates per Retain

	s, clock, _ := openMem(t)
	s.opts.FileReservedTime = -1
	var rs []PutResult
	for i := 0; i < 60; i++ {
		topic := "T"
		if i%5 == 0 {
			topic = "Gone" // deleted below: its records stay until retention
		}
		r := mustPut(t, s,
			msg(topic, int32(i%3), fmt.Sprint(i), protocol.PropertyKeys, fmt.Sprintf("k%d shared  k%d", i, i),
				protocol.PropertyUniqClientMessageIDKey, fmt.Sprint("u", i)),
			msg(topic, 0, "no keys"))
		rs = append(rs, r[0])
	}
	if err := s.DeleteTopic("Gone"); err != nil {
		t.Fatal(err)
	}
	countIndex := func() int {
		n := 0
		for _, kind := range []byte{index.KindKey, index.KindUniq} {
			it, err := s.db.NewIter(nil)
			if err != nil {
				t.Fatal(err)
			}
			for ok := it.SeekGE([]byte{kind}); ok && it.Key()[0] == kind; ok = it.Next() {
				n++
			}
			_ = it.Close()
		}
		return n
	}
	check := func(what string, firstLive int) {
		t.Helper()
		rep, err := s.Verify()
		if err != nil || rep.StaleIndex != 0 {
			t.Fatalf("%s: %+v %v", what, rep, err)
		}
		// Three KEYS words (k, shared, k again) make two distinct entries
		// plus the unique id: 3 per keyed message.
		if got, want := countIndex(), 3*(len(rs)-firstLive); got != want {
			t.Fatalf("%s: %d index entries, want %d", what, got, want)
		}
		if recs, err := s.QueryByKey("T", "shared", 100, 0, 0); err != nil || len(recs) != 4*(len(rs)-firstLive)/5 {
			t.Fatalf("%s: shared key finds %d records: %v", what, len(recs), err)
		}
	}
	check("before", 0)

	// No hint at all: Apply reads the doomed records itself.
	if _, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: rs[10].CommitLogOffset}); err != nil {
		t.Fatal(err)
	}
	check("unhinted", 10)

	// A hint that covers only part of the range, and names entries of live
	// records and of already deleted ones: only the doomed are deleted.
	part, _, err := indexKeysBetween(s.db, nil, rs[0].CommitLogOffset, rs[15].CommitLogOffset, 0)
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := indexKeysBetween(s.db, nil, rs[20].CommitLogOffset, rs[30].CommitLogOffset, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(&Op{Kind: OpTruncate, Cutoff: rs[20].CommitLogOffset,
		IndexKeys: append(part, live...), IndexTo: rs[15].CommitLogOffset}); err != nil {
		t.Fatal(err)
	}
	check("partial hint", 20)

	// Retention by budget, in several steps.
	s.opts.DiskBudget = s.MaxPhysOffset() - rs[40].CommitLogOffset
	if n, err := s.Retain(clock.Now()); err != nil || n <= truncateStep {
		t.Fatalf("retain: %d %v (want more than one step of %d)", n, err, truncateStep)
	}
	check("budget", 40)
}
