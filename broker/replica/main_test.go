package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/raftnet"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	msgcodec "github.com/runnelmq/runnel/message" // the test helper message() takes the name
	"github.com/runnelmq/runnel/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// storeTime is every test store's clock: AppendOp's store time is fixed,
// so ops built on different leaders are comparable.
var storeTime = time.Unix(1_700_000_000, 0)

// group is an in-process broker group on raft's in-memory transport.
type group struct {
	t     testing.TB
	mod   func(*Config)
	dirs  []string
	addrs []raft.ServerAddress
	peers []Peer

	net *raftnet.Net

	mu    sync.Mutex
	nodes []*Node // nil while down
}

func newGroup(t testing.TB, size int, mod func(*Config)) *group {
	t.Helper()
	g := &group{t: t, mod: mod, nodes: make([]*Node, size)}
	for i := range size {
		g.dirs = append(g.dirs, t.TempDir())
		g.addrs = append(g.addrs, raft.ServerAddress(fmt.Sprintf("node%d", i)))
		g.peers = append(g.peers, Peer{ID: fmt.Sprintf("n%d", i), Addr: string(g.addrs[i])})
	}
	g.net = raftnet.New(g.addrs)
	for i := range size {
		g.start(i)
	}
	t.Cleanup(func() {
		for i := range size {
			g.stop(i)
		}
	})
	return g
}

func (g *group) config(i int) Config {
	cfg := DefaultConfig()
	cfg.ID, cfg.Dir, cfg.Peers = g.peers[i].ID, g.dirs[i], g.peers
	cfg.LogNoSync = true
	cfg.Logger = testLogger()
	cfg.Store = store.Options{Now: func() time.Time { return storeTime }, MemTableSize: 4 << 20, CacheSize: 8 << 20,
		StoreHost: netip.MustParseAddrPort("10.0.0.1:10911")}
	if g.mod != nil {
		g.mod(&cfg)
	}
	return cfg
}

func testLogger() hclog.Logger {
	if os.Getenv("RUNNEL_TEST_LOG") != "" {
		return hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Debug})
	}
	return hclog.NewNullLogger()
}

// start (re)starts node i from its directory, on a fresh transport that
// every node not cut off is linked with.
func (g *group) start(i int) *Node {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	cfg := g.config(i)
	cfg.Transport = g.net.Transport(i)
	n, err := New(cfg)
	if err != nil {
		g.t.Fatalf("start node %d: %v", i, err)
	}
	g.nodes[i] = n
	return n
}

// stop shuts node i down (a crash, as far as the group can tell).
func (g *group) stop(i int) {
	g.t.Helper()
	g.mu.Lock()
	n := g.nodes[i]
	g.nodes[i] = nil
	g.mu.Unlock()
	if n != nil {
		if err := n.Shutdown(); err != nil {
			g.t.Errorf("shutdown node %d: %v", i, err)
		}
	}
}

// partition cuts node i off from every other node, or heals it.
func (g *group) partition(i int, cut bool) { g.net.Cut(i, cut) }

func (g *group) node(i int) *Node {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.nodes[i]
}

// leader waits until exactly one running node that is not in except is
// leader, and returns it.
func (g *group) leader(except ...int) int {
	g.t.Helper()
	var found int
	testwait.For(g.t, 30*time.Second, "a leader", func() bool {
		found = -1
		for i := range g.nodes {
			if n := g.node(i); n != nil && n.IsLeader() && !contains(except, i) {
				if found >= 0 {
					return false
				}
				found = i
			}
		}
		return found >= 0
	})
	return found
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// testMessage is the test's message: its body names it, and the model checks
// bodies.
func testMessage(topic string, q int32, body string) *message.MessageExt {
	m := &message.MessageExt{Message: message.Message{Topic: topic, Body: []byte(body)}, QueueID: q,
		BornTimestamp: 1, BornHost: netip.MustParseAddrPort("10.0.0.9:5000")}
	m.SetProperty(message.PropertyKeys, body)
	return m
}

// appendOp encodes the append of one message with n's store.
func appendOp(t testing.TB, n *Node, m *message.MessageExt) []byte {
	t.Helper()
	op, err := n.Store().AppendOp([]*message.MessageExt{m})
	if err != nil {
		t.Fatal(err)
	}
	return op.Marshal()
}

// dump is everything a store answers: every queue's records, consumer
// offsets, topics and its log range, as comparable text.
func dump(t testing.TB, s *store.Store) string {
	t.Helper()
	d, err := dumpStore(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dumpStore is dump's reading; it fails with store.ErrClosed when the
// store is closed under it (a node installing a snapshot replaces it).
func dumpStore(s *store.Store) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "phys %d..%d\n", s.MinPhysOffset(), s.MaxPhysOffset())
	qs := s.Queues()
	ids := make([]store.QueueID, 0, len(qs))
	for id := range qs {
		ids = append(ids, id)
	}
	sortQueues(ids)
	for _, id := range ids {
		r := qs[id]
		fmt.Fprintf(&b, "queue %s/%d %d..%d\n", id.Topic, id.ID, r.Min, r.Max)
		for off := r.Min; off < r.Max; {
			res, err := s.Get(id.Topic, id.ID, off, 32, 1<<20, nil)
			if err != nil {
				return "", fmt.Errorf("get %s/%d@%d: %w", id.Topic, id.ID, off, err)
			}
			if res.Count == 0 {
				return "", fmt.Errorf("get %s/%d@%d: nothing (status %v)", id.Topic, id.ID, off, res.Status)
			}
			fmt.Fprintf(&b, "%x\n", res.Messages)
			off = res.NextBeginOffset
		}
	}
	err := s.RangeConsumerOffsets(func(group, topic string, q int32, off int64) bool {
		fmt.Fprintf(&b, "offset %s %s/%d %d\n", group, topic, q, off)
		return true
	})
	if err != nil {
		return "", err
	}
	topics, err := s.Topics()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "topics %+v\n", topics)
	return b.String(), nil
}

func sortQueues(ids []store.QueueID) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && (ids[j].Topic < ids[j-1].Topic || ids[j].Topic == ids[j-1].Topic && ids[j].ID < ids[j-1].ID); j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

// bodies counts the stored bodies of every message in s.
func bodies(t testing.TB, s *store.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for id, r := range s.Queues() {
		for off := r.Min; off < r.Max; {
			res, err := s.Get(id.Topic, id.ID, off, 32, 1<<20, nil)
			if err != nil || res.Count == 0 {
				t.Fatalf("get %s/%d@%d: %v", id.Topic, id.ID, off, err)
			}
			ms, err := msgcodec.DecodeMessages(res.Messages)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				out[string(m.Body)]++
			}
			off = res.NextBeginOffset
		}
	}
	return out
}

// converged waits until every running node's store answers as the
// leader's does, and returns that dump.
func (g *group) converged() string {
	g.t.Helper()
	var want string
	testwait.For(g.t, 30*time.Second, "identical stores", func() bool {
		l := g.node(g.leader())
		if l == nil {
			return false
		}
		// A node installing a snapshot closes the store it replaces: a
		// read of it fails with ErrClosed, and the next poll reads the new.
		read := func(n *Node) (string, bool) {
			d, err := dumpStore(n.Store())
			if errors.Is(err, store.ErrClosed) {
				return "", false
			}
			if err != nil {
				g.t.Fatal(err)
			}
			return d, true
		}
		var ok bool
		if want, ok = read(l); !ok {
			return false
		}
		for i := range g.nodes {
			if n := g.node(i); n != nil {
				if d, ok := read(n); !ok || d != want {
					return false
				}
			}
		}
		return true
	})
	return want
}

func cycles() int {
	if v, err := strconv.Atoi(os.Getenv("RUNNEL_RAFT_CYCLES")); err == nil && v > 0 {
		return v
	}
	return 5
}

func proposeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}
