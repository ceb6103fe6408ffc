package replica

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// next waits for n's next Leadership value that satisfies ok.
func next(t *testing.T, n *Node, what string, ok func(Leadership) bool) Leadership {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l := <-n.Leadership():
			if ok(l) {
				return l
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Leadership tells a leader it leads (with its term), tells it when it is
// cut off and steps down, and tells the one elected after it, in a later
// term; the healed node learns the new leader.
func TestLeadershipNotified(t *testing.T) {
	g := newGroup(t, 3, nil)
	li := g.leader()
	l := g.node(li)
	first := next(t, l, "the leader's announcement", func(x Leadership) bool { return x.IsLeader })
	if first.Term == 0 || first.LeaderID != g.peers[li].ID {
		t.Fatalf("announcement %+v", first)
	}
	g.partition(li, true)
	next(t, l, "the cut-off leader to step down", func(x Leadership) bool { return !x.IsLeader })
	ni := g.leader(li)
	won := next(t, g.node(ni), "the new leader's announcement", func(x Leadership) bool { return x.IsLeader })
	if won.Term <= first.Term {
		t.Fatalf("new leader's term %d, old %d", won.Term, first.Term)
	}
	g.partition(li, false)
	next(t, l, "the old leader to learn the new one", func(x Leadership) bool {
		return !x.IsLeader && x.LeaderID == g.peers[ni].ID && x.Term >= won.Term
	})
}

// A group of one acknowledges writes alone; restarted, its store is
// rebuilt from its snapshot and log and answers as before.
func TestSingleNodeRestart(t *testing.T) {
	g := newGroup(t, 1, nil)
	l := g.node(g.leader())
	for i := range 60 {
		if i == 30 {
			if err := l.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := proposeCtx()
		res, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, fmt.Sprint("one", i))))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Appended[0].QueueOffset != int64(i) {
			t.Fatalf("message %d at offset %d", i, res.Appended[0].QueueOffset)
		}
	}
	want := dump(t, l.Store())
	g.stop(0)
	if _, err := l.Propose(context.Background(), nil); err != ErrClosed {
		t.Fatalf("Propose after Shutdown: %v", err)
	}
	n := g.start(0)
	// The store is rebuilt (snapshot, then the log's replay) before the
	// node announces that it leads.
	next(t, n, "the restarted node's announcement", func(x Leadership) bool { return x.IsLeader })
	if got := dump(t, n.Store()); got != want {
		t.Fatalf("restarted store differs:\n%.300s\nwant\n%.300s", got, want)
	}
}

// A cancelled or expired context fails Propose without an
// acknowledgement; the group goes on taking writes.
func TestProposeContext(t *testing.T) {
	g := newGroup(t, 3, nil)
	l := g.node(g.leader())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, "cancelled"))); err != context.Canceled {
		t.Fatalf("cancelled context: %v", err)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, "expired"))); err != context.DeadlineExceeded {
		t.Fatalf("expired context: %v", err)
	}
	pctx, pcancel := proposeCtx()
	defer pcancel()
	if _, err := l.Propose(pctx, appendOp(t, l, testMessage("T", 0, "ok"))); err != nil {
		t.Fatal(err)
	}
	g.converged()
	if b := bodies(t, l.Store()); len(b) != 1 || b["ok"] != 1 {
		t.Fatalf("store holds %v", b)
	}
}
