package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"

	"github.com/runnelmq/runnel/store"
)

// Concurrent appends and offset commits on a 3-node group leave three
// stores that answer every read alike, each append acknowledged with its
// own, distinct queue offset.
func TestGroupReplicates(t *testing.T) {
	g := newGroup(t, 3, nil)
	li := g.leader()
	l := g.node(li)
	const writers, each = 8, 40
	var wg sync.WaitGroup
	offsets := make([][]int64, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ctx, cancel := proposeCtx()
				res, err := l.Propose(ctx, appendOp(t, l, testMessage("T", int32(w%2), fmt.Sprintf("w%d-%d", w, i))))
				if err == nil && i%10 == 0 {
					op := &store.Op{Kind: store.OpCommitOffset, Offsets: []store.OffsetCommit{{Group: "g", Topic: "T", QueueID: int32(w % 2), Offset: int64(i)}}}
					_, err = l.Propose(ctx, op.Marshal())
				}
				cancel()
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				if res != nil {
					offsets[w] = append(offsets[w], res.Appended[0].QueueOffset)
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[[2]int64]bool{}
	for w, offs := range offsets {
		for _, o := range offs {
			k := [2]int64{int64(w % 2), o}
			if seen[k] {
				t.Fatalf("queue %d offset %d acknowledged twice", w%2, o)
			}
			seen[k] = true
		}
	}
	want := g.converged()
	for i := range 3 {
		got := bodies(t, g.node(i).Store())
		if len(got) != writers*each {
			t.Fatalf("node %d holds %d distinct messages, want %d", i, len(got), writers*each)
		}
		if off, ok, _ := g.node(i).Store().ConsumerOffset("g", "T", 0); !ok || off != each-10 {
			t.Fatalf("node %d: offset %d %v, want %d", i, off, ok, each-10)
		}
	}
	// The raft log is the write-ahead log: the stores, rebuilt from it on
	// every start, write none of their own.
	for i, dir := range g.dirs {
		wals, err := filepath.Glob(filepath.Join(dir, "store-*", "*", "*.log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wals {
			if fi, err := os.Stat(w); err == nil && fi.Size() > 0 {
				t.Fatalf("node %d's store wrote %d bytes of WAL (%s)", i, fi.Size(), w)
			}
		}
	}
	t.Logf("3 identical stores, %d bytes of dump", len(want))
}

// A follower refuses a proposal at once, naming the leader; a bad op is
// refused by every replica alike and changes nothing.
func TestFollowerRefusesAndBadOp(t *testing.T) {
	g := newGroup(t, 3, nil)
	li := g.leader()
	l := g.node(li)
	f := g.node((li + 1) % 3)
	testwait.For(t, 30*time.Second, "the follower to know the leader", func() bool { return f.Status().LeaderID == g.peers[li].ID })
	_, err := f.Propose(context.Background(), appendOp(t, l, testMessage("T", 0, "x")))
	var nl *NotLeaderError
	if !errors.Is(err, ErrNotLeader) || !errors.As(err, &nl) || nl.LeaderID != g.peers[li].ID || nl.LeaderAddr != g.peers[li].Addr || nl.Lost {
		t.Fatalf("follower's Propose: %v (%+v), want ErrNotLeader naming %v", err, nl, g.peers[li])
	}
	ctx, cancel := proposeCtx()
	defer cancel()
	if _, err := l.Propose(ctx, []byte{0xff, 1, 2}); !errors.Is(err, store.ErrBadOp) {
		t.Fatalf("bad op: %v, want store.ErrBadOp", err)
	}
	if _, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, "ok"))); err != nil {
		t.Fatal(err)
	}
	g.converged()
	for i := range 3 {
		if b := bodies(t, g.node(i).Store()); len(b) != 1 || b["ok"] != 1 {
			t.Fatalf("node %d holds %v", i, b)
		}
	}
}

// model records what proposers were told.
type model struct {
	mu    sync.Mutex
	acked map[string]string // body -> id of the node that acknowledged it
	tried int
}

// writers keep proposing unique bodies to whichever node is leader until
// stop is closed; they never re-send a body, so a body stored twice is a
// duplicate the group made.
func (g *group) writers(n int, m *model, stop <-chan struct{}, seq *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var l *Node
				for i := range g.nodes {
					if x := g.node(i); x != nil && x.IsLeader() {
						l = x
					}
				}
				if l == nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				body := fmt.Sprintf("m%d", seq.Add(1))
				enc := appendOpQuiet(l, testMessage("T", int32(w%4), body))
				if enc == nil {
					continue
				}
				ctx, cancel := proposeCtx()
				_, err := l.Propose(ctx, enc)
				cancel()
				m.mu.Lock()
				m.tried++
				if err == nil {
					m.acked[body] = l.cfg.ID
				}
				m.mu.Unlock()
				if err != nil {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	return &wg
}

// appendOpQuiet is appendOp for a goroutine that must not fail the test:
// nil if n's store is closed under it (a restart).
func appendOpQuiet(n *Node, m *message.MessageExt) []byte {
	op, err := n.Store().AppendOp([]*message.MessageExt{m})
	if err != nil {
		return nil
	}
	return op.Marshal()
}

// check fails t unless every acknowledged body is in every running store
// exactly once and no body is in any store twice.
func (g *group) check(m *model, absent ...string) {
	g.t.Helper()
	g.converged()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range g.nodes {
		n := g.node(i)
		if n == nil {
			continue
		}
		got := bodies(g.t, n.Store())
		for b, c := range got {
			if c != 1 {
				g.t.Fatalf("node %d holds %s %d times", i, b, c)
			}
		}
		for b, by := range m.acked {
			if got[b] != 1 {
				g.t.Fatalf("node %d: %s, acknowledged by %s, is missing", i, b, by)
			}
		}
		for _, b := range absent {
			if got[b] != 0 {
				g.t.Fatalf("node %d holds %s, which a cut-off leader was asked to write", i, b)
			}
		}
	}
}
