package replica

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
)

// waitAcked waits until the model holds more than n acknowledgements.
func waitAcked(t testing.TB, m *model, n int) {
	t.Helper()
	testwait.For(t, 30*time.Second, fmt.Sprintf("more than %d acknowledged writes", n), func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.acked) > n
	})
}

func acked(m *model) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.acked)
}

// Under steady writers, RUNNEL_RAFT_CYCLES times: kill the leader (a new
// one is elected and takes writes; the old node restarts from its
// directory and catches up), or cut it off from the majority (a proposal
// it is given fails and is never stored; the majority elects another and
// takes writes; healed, it steps down and converges). Afterwards every
// acknowledged write is in every store exactly once.
func TestFailoverCycles(t *testing.T) {
	g := newGroup(t, 3, nil)
	m := &model{acked: map[string]string{}}
	var seq atomic.Int64
	var absent []string
	for c := range cycles() {
		stop := make(chan struct{})
		wg := g.writers(4, m, stop, &seq)
		halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
		defer halt()
		old := g.leader()
		waitAcked(t, m, acked(m))
		if c%2 == 0 {
			// Kill the leader.
			g.stop(old)
			nl := g.leader(old)
			waitAcked(t, m, acked(m))
			// The new leader announces itself.
			testwait.For(t, 30*time.Second, "the new leader's announcement", func() bool {
				select {
				case l := <-g.node(nl).Leadership():
					return l.IsLeader && l.Term > 0
				default:
					return false
				}
			})
			g.start(old)
		} else {
			// Cut the leader off.
			ol := g.node(old)
			g.partition(old, true)
			body := fmt.Sprintf("cut%d", c)
			ctx, cancel := proposeCtx()
			_, err := ol.Propose(ctx, appendOp(t, ol, testMessage("T", 0, body)))
			cancel()
			if !errors.Is(err, ErrNotLeader) {
				t.Fatalf("cycle %d: a cut-off leader's proposal: %v, want ErrNotLeader", c, err)
			}
			absent = append(absent, body)
			nl := g.leader(old)
			waitAcked(t, m, acked(m))
			if ol.IsLeader() {
				t.Fatalf("cycle %d: the cut-off node still leads after %s was elected", c, g.peers[nl].ID)
			}
			g.partition(old, false)
		}
		// Writes go on until the healed node has caught up once.
		waitAcked(t, m, acked(m))
		halt()
		g.check(m, absent...)
		t.Logf("cycle %d: %d acknowledged of %d tried", c, acked(m), m.tried)
	}
}

// A follower cut off while the log is compacted past it catches up from a
// snapshot: its store is replaced by the leader's.
func TestSnapshotCatchUp(t *testing.T) {
	g := newGroup(t, 3, func(c *Config) {
		c.SnapshotThreshold, c.TrailingLogs = 16, 4
	})
	li := g.leader()
	l := g.node(li)
	fi := (li + 1) % 3
	g.partition(fi, true)
	before := g.node(fi).Store()
	for i := range 100 {
		ctx, cancel := proposeCtx()
		_, err := l.Propose(ctx, appendOp(t, l, testMessage("T", int32(i%3), fmt.Sprint("s", i))))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	g.partition(fi, false)
	want := g.converged()
	if g.node(fi).Store() == before {
		t.Fatal("the follower caught up without a snapshot")
	}
	if b := bodies(t, g.node(fi).Store()); len(b) != 100 {
		t.Fatalf("follower holds %d messages", len(b))
	}
	// A restart rebuilds the store from the snapshot and the log.
	g.stop(fi)
	g.start(fi)
	if got := g.converged(); got != want {
		t.Fatal("restarted follower differs")
	}
}
