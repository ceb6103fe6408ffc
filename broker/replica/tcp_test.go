package replica

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/store"
)

// A group of three on raft's TCP transport (loopback) elects a leader and
// replicates to every member.
func TestTCPGroup(t *testing.T) {
	var peers []Peer
	for i := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, Peer{ID: fmt.Sprint("n", i), Addr: ln.Addr().String()})
		ln.Close()
	}
	var nodes []*Node
	for i := range 3 {
		cfg := DefaultConfig()
		cfg.ID, cfg.Dir, cfg.Peers, cfg.BindAddr = peers[i].ID, t.TempDir(), peers, peers[i].Addr
		cfg.Logger = testLogger()
		cfg.Store = store.Options{Now: func() time.Time { return storeTime }, MemTableSize: 4 << 20, CacheSize: 8 << 20}
		n, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Shutdown() })
		nodes = append(nodes, n)
	}
	var l *Node
	testwait.For(t, 30*time.Second, "a leader", func() bool {
		for _, n := range nodes {
			if n.IsLeader() {
				l = n
			}
		}
		return l != nil
	})
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := l.Propose(ctx, appendOp(t, l, testMessage("T", 0, fmt.Sprint("tcp", i))))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	var want string
	testwait.For(t, 30*time.Second, "identical stores", func() bool {
		want = dump(t, l.Store())
		for _, n := range nodes {
			if dump(t, n.Store()) != want {
				return false
			}
		}
		return true
	})
	if b := bodies(t, nodes[0].Store()); len(b) != 20 {
		t.Fatalf("%d messages", len(b))
	}
}
