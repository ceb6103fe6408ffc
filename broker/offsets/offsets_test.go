package offsets

import (
	"errors"
	"slices"
	"testing"
)

func TestCommitGetAndNegatives(t *testing.T) {
	tb := New()
	k := Key{Group: "g", Topic: "T", QueueID: 1}
	if _, ok := tb.Get(k); ok {
		t.Fatal("empty table has an offset")
	}
	if !tb.Commit(k, 5) || tb.Commit(k, -1) {
		t.Fatal("commit results wrong")
	}
	if off, ok := tb.Get(k); !ok || off != 5 {
		t.Fatalf("got %d %v, want 5", off, ok)
	}
}

func TestPersistWritesOnlyChangesAndRetriesFailures(t *testing.T) {
	tb := New()
	tb.Load([]Entry{{Key: Key{"g", "T", 0}, Offset: 1}})
	tb.Commit(Key{"g", "T", 1}, 4)
	tb.Commit(Key{"g", "T", 2}, 6)
	tb.Commit(Key{"g", "T", 0}, 1) // unchanged: not dirty

	var written []Entry
	boom := errors.New("boom")
	n, err := tb.Persist(func(es []Entry) (int, error) {
		written = append(written, es[0])
		return 1, boom // the second entry fails
	})
	if n != 1 || !errors.Is(err, boom) || written[0].QueueID != 1 {
		t.Fatalf("first persist: n=%d err=%v written=%v", n, err, written)
	}
	var second []Entry
	n, err = tb.Persist(func(es []Entry) (int, error) {
		second = append(second, es...)
		return len(es), nil
	})
	if n != 1 || err != nil || len(second) != 1 || second[0].QueueID != 2 || second[0].Offset != 6 {
		t.Fatalf("retry persist: n=%d err=%v %v", n, err, second)
	}
	if n, _ := tb.Persist(func(es []Entry) (int, error) { return len(es), nil }); n != 0 {
		t.Fatalf("nothing changed, yet %d written", n)
	}
}

func TestGroupTopicsAndDrop(t *testing.T) {
	tb := New()
	tb.Commit(Key{"g", "B", 0}, 1)
	tb.Commit(Key{"g", "A", 1}, 2)
	tb.Commit(Key{"g", "A", 0}, 3)
	tb.Commit(Key{"h", "A", 0}, 4)
	es := tb.Group("g", "")
	if len(es) != 3 || es[0].Topic != "A" || es[0].QueueID != 0 || es[2].Topic != "B" {
		t.Fatalf("group entries %v", es)
	}
	if got := tb.GroupsOfTopic("A"); !slices.Equal(got, []string{"g", "h"}) {
		t.Fatalf("groups of A: %v", got)
	}
	tb.DropTopic("A")
	if tb.Len() != 1 {
		t.Fatalf("%d left after dropping A", tb.Len())
	}
	if n, _ := tb.Persist(func(es []Entry) (int, error) {
		for _, e := range es {
			if e.Topic == "A" {
				t.Errorf("dropped entry %v written", e)
			}
		}
		return len(es), nil
	}); n != 1 {
		t.Fatalf("persisted %d, want 1", n)
	}
}

// A pull's piggy-backed commit is the consumer's view when it sent the
// pull; processed after the consumer's final explicit commit it must not
// move the group back (the next owner would get those messages again).
func TestCommitForwardNeverMovesBack(t *testing.T) {
	tbl := New()
	k := Key{Group: "g", Topic: "T", QueueID: 0}
	if !tbl.CommitForward(k, 49) {
		t.Fatal("first forward commit not recorded")
	}
	tbl.Commit(k, 50) // the explicit final commit
	tbl.CommitForward(k, 49)
	if off, _ := tbl.Get(k); off != 50 {
		t.Fatalf("offset %d after a stale piggy-backed commit, want 50", off)
	}
	tbl.CommitForward(k, 60)
	if off, _ := tbl.Get(k); off != 60 {
		t.Fatalf("offset %d, want 60", off)
	}
	// An explicit commit (an admin reset) may still move it back.
	tbl.Commit(k, 10)
	if off, _ := tbl.Get(k); off != 10 {
		t.Fatalf("offset %d after an explicit commit, want 10", off)
	}
	if tbl.CommitForward(k, -1) {
		t.Fatal("negative offset recorded")
	}
}
