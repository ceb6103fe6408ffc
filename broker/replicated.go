package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// replicated is the core's backend on a replicated group's node: reads
// from the node's current store, every mutation proposed through raft
// (encoded, (*store.Op).Marshal) and answered once a majority holds it and
// this node applied it. Concurrent proposals share raft's disk write and
// AppendEntries round (replica's package doc, Batching).
type replicated struct {
	n       *replica.Node
	timeout time.Duration
	appends *appendBatcher // concurrent sends share an entry (appendbatch.go)
}

func (r replicated) Store() *store.Store { return r.n.Store() }

func (r replicated) IsLeader() bool { return r.n.IsLeader() }

func (r replicated) Close() error { return r.n.Shutdown() }

func (r replicated) Put(msgs []*protocol.MessageExt) ([]store.PutResult, error) {
	if !r.n.IsLeader() { // before encoding anything
		return nil, r.mapErr(&replica.NotLeaderError{})
	}
	op, err := r.n.Store().AppendOp(msgs)
	if err != nil {
		return nil, err
	}
	appended, err := r.appends.append(op)
	if err != nil {
		return nil, err
	}
	out := make([]store.PutResult, len(appended))
	for i, a := range appended {
		out[i] = store.PutResult{QueueOffset: a.QueueOffset, CommitLogOffset: a.PhysOffset, Size: a.Size,
			StoreTimestamp: a.StoreTimestamp, StoreHost: msgs[i].StoreHost}
	}
	return out, nil
}

func (r replicated) Apply(op *store.Op) (*store.ApplyResult, error) { return r.propose(op) }

func (r replicated) propose(op *store.Op) (*store.ApplyResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	res, err := r.n.Propose(ctx, op.Marshal())
	if err != nil {
		return nil, r.mapErr(err)
	}
	return res, nil
}

// mapErr gives the core the errors it answers: a refusal as not master
// (a slave's answer), a node shut down as a closed store.
func (r replicated) mapErr(err error) error {
	switch {
	case errors.Is(err, replica.ErrNotLeader):
		return fmt.Errorf("%w: %w", core.ErrNotMaster, err)
	case errors.Is(err, replica.ErrClosed):
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	}
	return err
}

// replicaConfig is the raft node's config for the broker's.
func (b *Broker) replicaConfig(sopts store.Options) replica.Config {
	r := b.cfg.Replication
	rc := replica.DefaultConfig()
	rc.ID, rc.Dir, rc.Peers, rc.Store = r.SelfID, b.cfg.StoreDir, r.Peers, sopts
	for _, p := range r.Peers {
		if p.ID == r.SelfID {
			rc.BindAddr = p.Addr
		}
	}
	rc.Transport = r.Transport
	rc.HeartbeatTimeout, rc.ElectionTimeout = r.HeartbeatTimeout, r.ElectionTimeout
	rc.LeaderLeaseTimeout = r.HeartbeatTimeout * 5 / 6
	rc.LogNoSync = r.LogNoSync
	// Zero keeps replica's default (its ensureDefaults fills them in).
	rc.SnapshotInterval, rc.SnapshotThreshold, rc.TrailingLogs = r.SnapshotInterval, r.SnapshotThreshold, r.TrailingLogs
	rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: raftLog{b.log}})
	return rc
}

// raftLog writes raft's log lines to the broker's logger.
type raftLog struct{ log *slog.Logger }

func (l raftLog) Write(p []byte) (int, error) {
	l.log.Warn(strings.TrimSpace(string(p)))
	return len(p), nil
}

// openReplicated opens the raft node and the core over it.
func (b *Broker) openReplicated(ccfg core.Config, sopts store.Options) (*core.Core, error) {
	// The node opens (and on a snapshot install, reopens) the stores; the
	// core exists only after, so the hook goes through a pointer.
	var hook atomic.Pointer[core.Core]
	sopts.OnArrival = func(topic string, queueID int32, maxOffset int64) {
		if c := hook.Load(); c != nil {
			c.OnArrival(topic, queueID, maxOffset)
		}
	}
	n, err := replica.New(b.replicaConfig(sopts))
	if err != nil {
		return nil, err
	}
	be := replicated{n: n, timeout: b.cfg.Replication.ProposeTimeout}
	be.appends = &appendBatcher{propose: be.propose}
	c, err := core.OpenBackend(ccfg, be)
	if err != nil {
		_ = n.Shutdown()
		return nil, err
	}
	hook.Store(c)
	b.node, b.repl = n, be
	return c, nil
}

// groupRetentionInterval is how often a group's master proposes
// retention (the store's own background retention is off on a replica:
// each truncation must be one op in the log, the same on every node).
const groupRetentionInterval = 10 * time.Second

// retainLoop has the master propose the truncations retention calls for.
func (b *Broker) retainLoop() {
	t := time.NewTicker(groupRetentionInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		for b.master.Load() {
			op, more, err := b.node.Store().RetentionOp(b.cfg.Now())
			if err == nil && op != nil {
				_, err = b.repl.propose(op)
			}
			if err != nil {
				b.log.Warn("broker: retention", "err", err)
			}
			if err != nil || op == nil || !more {
				break
			}
		}
	}
}

// watchLeadership follows the node's role: a leader (announced once its
// store holds every committed entry) becomes master, anything else slave,
// and either way the broker registers its new brokerId at once, so the
// name servers list the new master within one registration round trip.
func (b *Broker) watchLeadership() {
	for {
		select {
		case <-b.stop:
			return
		case l := <-b.node.Leadership():
			b.term.Store(l.Term)
			if l.IsLeader {
				if err := b.core.Promote(); err != nil {
					b.log.Error("broker: becoming master", "term", l.Term, "err", err)
					continue // the next change (or a retry by raft) comes
				}
				b.master.Store(true)
				b.log.Info("broker: master of its group", "term", l.Term)
				if err := b.auth.EnsureInitUsers(); err != nil {
					b.log.Error("broker: creating the initial ACL users", "err", err)
				}
			} else {
				wasMaster := b.master.Swap(false)
				b.core.Demote()
				if wasMaster {
					b.log.Info("broker: slave now", "term", l.Term, "leader", l.LeaderID)
				}
			}
			if b.registerAll(b.ctx) > 0 {
				b.kickRegister()
			}
		}
	}
}

// Runtime info keys of a group node (GET_BROKER_RUNTIME_INFO): its role
// as registered, and its raft state. Java's DLedger broker shows its role
// through brokerId only; the raft figures are Runnel's.
const (
	InfoBrokerRole   = "brokerRole"       // MASTER or SLAVE
	InfoRaftState    = "raftState"        // Leader, Follower, Candidate, Shutdown
	InfoRaftTerm     = "raftTerm"         // current term
	InfoRaftApplied  = "raftAppliedIndex" // last log index applied to the store
	InfoRaftCommit   = "raftCommitIndex"  // last log index known committed
	InfoRaftLeaderID = "raftLeaderId"     // dLegerSelfId of the leader it knows
)

// replicaRuntimeInfo adds the group node's figures to table.
func (b *Broker) replicaRuntimeInfo(table map[string]string) {
	role := "SLAVE"
	if b.IsMaster() {
		role = "MASTER"
	}
	table[InfoBrokerRole] = role
	st, ok := b.ReplicaStatus()
	if !ok {
		return
	}
	table[InfoRaftState] = st.State
	table[InfoRaftTerm] = strconv.FormatUint(st.Term, 10)
	table[InfoRaftApplied] = strconv.FormatUint(st.AppliedIndex, 10)
	table[InfoRaftCommit] = strconv.FormatUint(st.CommitIndex, 10)
	table[InfoRaftLeaderID] = st.LeaderID
}

// ReplicaStatus is the node's raft state (ok false on a single broker).
func (b *Broker) ReplicaStatus() (replica.Status, bool) {
	if b.node == nil {
		return replica.Status{}, false
	}
	return b.node.Status(), true
}

// Node is the broker's raft node, nil on a single broker (for tests).
func (b *Broker) Node() *replica.Node { return b.node }

// IsMaster says whether this broker is its group's master now (a single
// broker always is, unless configured a slave by brokerId).
func (b *Broker) IsMaster() bool {
	if b.node == nil {
		return b.cfg.BrokerID == protocol.MasterID
	}
	return b.master.Load()
}

// consumeSlowlyBytes is Java's accessMessageInMemoryMaxRatio (40) of this
// machine's memory: the backlog past which a master suggests a slave.
func consumeSlowlyBytes() int64 { return physicalMemory() * 40 / 100 }
