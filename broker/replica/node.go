package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/raft"

	"github.com/runnelmq/runnel/store"
)

// ErrNotLeader is what Propose fails with on a node that is not the
// group's leader (errors.Is); the error is a *NotLeaderError naming the
// leader when this node knows it.
var ErrNotLeader = errors.New("replica: not the leader")

// ErrClosed is returned by Propose once the node is shut down (or has
// stopped itself after a store failure).
var ErrClosed = errors.New("replica: node shut down")

// NotLeaderError is a refused or abandoned proposal.
type NotLeaderError struct {
	// LeaderID and LeaderAddr are the leader this node knows of; empty
	// while there is none (an election is under way).
	LeaderID, LeaderAddr string
	// Lost says the entry was appended to this node's log before it lost
	// leadership: the new leader may yet commit it, or may not. Either way
	// it was not acknowledged, and a client that retries may store it twice
	// (RocketMQ's at-least-once).
	Lost bool
}

func (e *NotLeaderError) Error() string {
	var b strings.Builder
	b.WriteString("replica: not the leader")
	if e.Lost {
		b.WriteString(" (leadership lost before the entry committed)")
	}
	if e.LeaderID != "" || e.LeaderAddr != "" {
		fmt.Fprintf(&b, "; leader %s at %s", e.LeaderID, e.LeaderAddr)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotLeader) hold.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// Leadership is this node's role after a change.
type Leadership struct {
	IsLeader bool
	Term     uint64
	// LeaderID and LeaderAddr are the group's leader as this node knows it
	// (itself when IsLeader), empty while there is none.
	LeaderID, LeaderAddr string
}

// Node is one member of a replicated broker group. See the package doc for
// what it promises.
type Node struct {
	cfg   Config
	fs    vfs.FS
	raft  *raft.Raft
	logs  *raftLog
	trans raft.Transport

	cur atomic.Pointer[generation]
	gen int // last store generation; FSM goroutine (and New) only

	obsCh    chan raft.Observation
	observer *raft.Observer
	// watchStop stops the leadership watcher, watchDone says it has
	// stopped: Shutdown stops it before raft, because a barrier queued
	// to a raft that then shuts down is never answered.
	watchStop, watchDone chan struct{}
	leaderCh             chan Leadership
	lastSeen             atomic.Pointer[Leadership]
	wg                   sync.WaitGroup

	// propMu and inflight let Shutdown stop proposals and wait for raft
	// to answer the ones under way before it stops raft: hashicorp/raft
	// leaves the futures of entries committed but not yet applied
	// unanswered forever when it shuts down.
	propMu   sync.RWMutex
	inflight sync.WaitGroup

	failOnce sync.Once
	failErr  atomic.Pointer[error]
	closed   atomic.Bool
	shutOnce sync.Once
	shutErr  error
}

// generation is one store the node opened and the directory it lives in.
type generation struct {
	s   *store.Store
	dir string
}

// New starts a node: it opens the raft log in cfg.Dir, rebuilds the store
// from the latest raft snapshot (the log's committed entries follow as the
// leader reports them), bootstraps the group from cfg.Peers if this node
// has no raft state, and joins it.
func New(cfg Config) (*Node, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, fs: cfg.Store.FS, leaderCh: make(chan Leadership, 1)}
	if n.fs == nil {
		n.fs = vfs.Default
	}
	ok := false
	defer func() {
		if !ok {
			n.closeResources()
		}
	}()
	// The raft log first: it refuses a directory another process holds
	// (ErrInUse) before the stores of an earlier run are deleted.
	var err error
	if n.logs, err = openRaftLog(cfg.Dir, cfg.LogNoSync, cfg.LogSyncInterval, cfg.Logger, n.fail); err != nil {
		return nil, err
	}
	if err := n.resetStores(); err != nil {
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(cfg.Dir, "snapshots"), cfg.SnapshotRetain, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("replica: snapshots: %w", err)
	}
	if n.trans = cfg.Transport; n.trans == nil {
		if n.trans, err = tcpTransport(&cfg); err != nil {
			return nil, err
		}
	}
	rc := cfg.raftConfig()
	has, err := raft.HasExistingState(n.logs, n.logs, snaps)
	if err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	if !has {
		var servers []raft.Server
		for _, p := range cfg.Peers {
			servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
		}
		if err := raft.BootstrapCluster(rc, n.logs, n.logs, snaps, n.trans, raft.Configuration{Servers: servers}); err != nil {
			return nil, fmt.Errorf("replica: bootstrap: %w", err)
		}
	}
	// Observe before raft runs, so the first election is seen.
	n.obsCh = make(chan raft.Observation, 64)
	// Raft reads back what it just wrote: the leader each entry it sends
	// a follower, a follower each entry it applies. A cache of the latest
	// entries serves those reads from memory instead of a Pebble lookup
	// and a copy per read.
	var logs raft.LogStore = n.logs
	if cfg.LogCacheEntries > 0 {
		if logs, err = raft.NewLogCache(cfg.LogCacheEntries, n.logs); err != nil {
			return nil, fmt.Errorf("replica: %w", err)
		}
	}
	if n.raft, err = raft.NewRaft(rc, &fsm{n: n}, logs, n.logs, snaps, n.trans); err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	// Observations are only wake-ups (the state is read afresh from raft),
	// so a full channel may drop some: the ones queued will wake the
	// watcher after the change.
	n.observer = raft.NewObserver(n.obsCh, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.LeaderObservation, raft.RaftState:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(n.observer)
	n.watchStop, n.watchDone = make(chan struct{}), make(chan struct{})
	go n.watch() // owned by watchStop/watchDone (stopWatcher), not wg

	ok = true
	return n, nil
}

// Store is the node's current store, for reads. Only the node writes it
// (through the raft log: Propose). A snapshot install (a follower far
// behind) replaces it: the previous handle is then closed and answers
// store.ErrClosed, so callers fetch Store for each request rather than
// keeping it.
func (n *Node) Store() *store.Store { return n.cur.Load().s }

// Leadership delivers this node's role after each change, latest first: a
// value not yet received is replaced by a newer one. A leader is announced
// only once its store holds every entry committed before its term (a
// barrier), so what it serves is never older than what it acknowledged.
// The channel is never closed.
func (n *Node) Leadership() <-chan Leadership { return n.leaderCh }

// IsLeader says whether this node is the leader now (it may learn it is
// not only later).
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Status is a node's raft state, for admin tools.
type Status struct {
	ID, State              string
	Term                   uint64
	LastIndex, CommitIndex uint64
	AppliedIndex           uint64
	LeaderID, LeaderAddr   string
}

// Status reports the node's raft state.
func (n *Node) Status() Status {
	addr, id := n.raft.LeaderWithID()
	return Status{ID: n.cfg.ID, State: n.raft.State().String(), Term: n.raft.CurrentTerm(),
		LastIndex: n.raft.LastIndex(), CommitIndex: n.raft.CommitIndex(), AppliedIndex: n.raft.AppliedIndex(),
		LeaderID: string(id), LeaderAddr: string(addr)}
}

// Propose replicates op (an encoded store op, (*store.Op).Marshal) and
// returns the result the local store gave when it applied it, once a
// majority holds it in their logs and this node has applied it. On a node
// that is not the leader it fails at once with ErrNotLeader. Any error
// means the op was not acknowledged (it may still be committed, see
// NotLeaderError.Lost); a store error that every replica gives alike
// (store.ErrBadOp, store.ErrInvalidOp) comes back as the store gave it.
// ctx bounds the wait; it cannot withdraw an entry already in the log.
func (n *Node) Propose(ctx context.Context, op []byte) (*store.ApplyResult, error) {
	n.propMu.RLock()
	if n.closed.Load() {
		n.propMu.RUnlock()
		return nil, ErrClosed
	}
	n.inflight.Add(1)
	n.propMu.RUnlock()
	defer n.inflight.Done()
	if n.raft.State() != raft.Leader {
		return nil, n.notLeader(false)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var timeout time.Duration
	if d, ok := ctx.Deadline(); ok {
		if timeout = time.Until(d); timeout <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	f := n.raft.Apply(op, timeout)
	if ctx.Done() != nil {
		done := make(chan struct{})
		n.inflight.Add(1)
		go func() { // ends when raft answers, which Shutdown waits for
			defer n.inflight.Done()
			_ = f.Error()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := f.Error(); err != nil {
		return nil, n.mapErr(err)
	}
	a, _ := f.Response().(applied)
	return a.res, a.err
}

func (n *Node) mapErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return n.notLeader(false)
	case errors.Is(err, raft.ErrLeadershipLost):
		return n.notLeader(true)
	case errors.Is(err, raft.ErrRaftShutdown):
		if e := n.failErr.Load(); e != nil {
			return fmt.Errorf("%w: %w", ErrClosed, *e)
		}
		return ErrClosed
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("replica: %w: %w", context.DeadlineExceeded, err)
	}
	return fmt.Errorf("replica: %w", err)
}

func (n *Node) notLeader(lost bool) error {
	addr, id := n.raft.LeaderWithID()
	if id == raft.ServerID(n.cfg.ID) { // stale: we were it
		addr, id = "", ""
	}
	return &NotLeaderError{LeaderID: string(id), LeaderAddr: string(addr), Lost: lost}
}

// Snapshot makes raft snapshot the store now and compact its log (as it
// does on its own past SnapshotThreshold entries).
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return fmt.Errorf("replica: snapshot: %w", err)
	}
	return nil
}

// watch turns raft's observations into Leadership values.
func (n *Node) watch() {
	defer close(n.watchDone)
	for {
		select {
		case <-n.watchStop:
			return
		case <-n.obsCh:
		}
		l := n.current()
		if l.IsLeader {
			// Announce leadership only once the store has caught up with
			// the log; if the barrier fails we lost it again, and the
			// observation that says so is queued. While raft runs a
			// barrier is always answered: a leader commits it or, losing
			// its lease, fails it; a follower or candidate refuses it.
			if err := n.raft.Barrier(0).Error(); err != nil {
				continue
			}
			if l = n.current(); !l.IsLeader {
				continue
			}
		}
		if p := n.lastSeen.Load(); p != nil && *p == l {
			continue
		}
		n.lastSeen.Store(&l)
		select { // replace a value nobody received yet
		case <-n.leaderCh:
		default:
		}
		n.leaderCh <- l
	}
}

func (n *Node) current() Leadership {
	addr, id := n.raft.LeaderWithID()
	l := Leadership{IsLeader: n.raft.State() == raft.Leader, Term: n.raft.CurrentTerm(), LeaderID: string(id), LeaderAddr: string(addr)}
	if !l.IsLeader && l.LeaderID == n.cfg.ID {
		l.LeaderID, l.LeaderAddr = "", ""
	}
	return l
}

// fail stops a node whose store or raft log failed under it (see
// fsm.apply, raftLog.latch). It runs on one of raft's goroutines, which
// raft's Shutdown waits for, hence the goroutine; Shutdown waits for it in
// turn. Before raft runs (a failed bootstrap write) New returns the error.
func (n *Node) fail(err error) {
	n.failOnce.Do(func() {
		n.failErr.Store(&err)
		n.cfg.Logger.Error("replica: stopping", "error", err)
		if n.raft == nil {
			return
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			_ = n.raft.Shutdown().Error()
		}()
	})
}

// Shutdown stops the node: raft (pending proposals fail with ErrClosed),
// its transport, the leadership watcher, the store and the raft log. It is
// idempotent; the node's directory can be opened again by New.
func (n *Node) Shutdown() error {
	n.shutOnce.Do(func() {
		n.propMu.Lock()
		n.closed.Store(true)
		n.propMu.Unlock()
		n.awaitProposals()
		n.stopWatcher()
		n.shutErr = n.raft.Shutdown().Error()
		n.raft.DeregisterObserver(n.observer)
		n.wg.Wait()
		if err := n.closeResources(); n.shutErr == nil {
			n.shutErr = err
		}
	})
	return n.shutErr
}

// stopWatcher stops the leadership watcher while raft still answers its
// barrier. The bound is for a raft already stopped under it (a failed
// store, see fail); the watcher then stays blocked in its barrier.
func (n *Node) stopWatcher() {
	close(n.watchStop)
	t := time.NewTimer(10 * (n.cfg.HeartbeatTimeout + n.cfg.ElectionTimeout))
	defer t.Stop()
	select {
	case <-n.watchDone:
	case <-t.C:
		n.cfg.Logger.Warn("replica: shutting down with the leadership watcher in a barrier")
	}
}

// awaitProposals waits until raft has answered every proposal under way:
// a leader answers within a round trip, a cut-off one once its lease runs
// out (it steps down and fails them). The bound is for a raft that no
// longer makes progress at all.
func (n *Node) awaitProposals() {
	done := make(chan struct{})
	go func() { n.inflight.Wait(); close(done) }()
	t := time.NewTimer(10 * (n.cfg.HeartbeatTimeout + n.cfg.ElectionTimeout))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		n.cfg.Logger.Warn("replica: shutting down with proposals unanswered")
	}
}

func (n *Node) closeResources() error {
	var errs []error
	if nt, ok := n.trans.(*raft.NetworkTransport); ok {
		// Close alone leaves the pooled connections open, and with them
		// the peers' handlers reading them.
		nt.CloseStreams()
	}
	if c, ok := n.trans.(raft.WithClose); ok {
		errs = append(errs, c.Close())
	}
	if g := n.cur.Load(); g != nil {
		errs = append(errs, g.s.Close())
	}
	if n.logs != nil {
		errs = append(errs, n.logs.Close())
	}
	return errors.Join(errs...)
}

func (n *Node) storeOptions(dir string) store.Options {
	o := n.cfg.Store
	o.Dir, o.FS = dir, n.fs
	o.RetentionInterval, o.ProposedRetention = -1, true
	o.FlushMode, o.FlushInterval = store.AsyncFlush, -1
	// The store is rebuilt from the raft log on every start, so a WAL of
	// its own would be written and never read: a write, a copy and a wake
	// of Pebble's WAL writer per entry on every node.
	o.NoWAL = true
	return o
}

// resetStores deletes the stores of an earlier run and opens an empty
// one: the store is a function of the raft snapshot and log, rebuilt from
// them on every start (see the package doc).
func (n *Node) resetStores() error {
	if err := n.fs.MkdirAll(n.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	names, err := n.fs.List(n.cfg.Dir)
	if err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, "store-") {
			if err := n.fs.RemoveAll(n.fs.PathJoin(n.cfg.Dir, name)); err != nil {
				return fmt.Errorf("replica: %w", err)
			}
		}
	}
	n.gen = 1
	dir := n.storeDir(n.gen)
	s, err := store.Open(n.storeOptions(dir))
	if err != nil {
		return err
	}
	n.cur.Store(&generation{s: s, dir: dir})
	return nil
}

func (n *Node) storeDir(gen int) string {
	return n.fs.PathJoin(n.cfg.Dir, fmt.Sprintf("store-%d", gen))
}

// restoreStore swaps in a store restored from r (the FSM goroutine's
// Restore), closing and deleting the one it replaces.
func (n *Node) restoreStore(r io.Reader) error {
	n.gen++
	dir := n.storeDir(n.gen)
	_ = n.fs.RemoveAll(dir)
	s, err := store.Restore(n.storeOptions(dir), r)
	if err != nil {
		return fmt.Errorf("replica: restore: %w", err)
	}
	old := n.cur.Swap(&generation{s: s, dir: dir})
	if err := old.s.Close(); err != nil {
		n.cfg.Logger.Warn("replica: closing the replaced store", "error", err)
	}
	_ = n.fs.RemoveAll(old.dir)
	return nil
}
