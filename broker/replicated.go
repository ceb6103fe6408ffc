package broker

import (
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/replica"
	"github.com/runnelmq/runnel/store"
)

// replicaConfig is the raft node's config for the broker's.
func (b *Broker) replicaConfig(sopts store.Options) (replica.Config, error) {
	r := b.cfg.Replication
	rc := replica.DefaultConfig()
	rc.ID, rc.Dir, rc.Peers, rc.Store = r.SelfID, b.cfg.StoreDir, r.Peers, sopts
	for _, p := range r.Peers {
		if p.ID == r.SelfID {
			rc.BindAddr = p.Addr
		}
	}
	rc.Transport = r.Transport
	if r.TLSCertPath != "" {
		tc, err := replica.TLSConfig(r.TLSCertPath, r.TLSKeyPath, r.TLSCAPath)
		if err != nil {
			return rc, err
		}
		rc.TLS = tc
	} else if r.Transport == nil && acl.Reachable(rc.BindAddr) {
		b.log.Warn("broker: raft listens on an address reachable from other hosts over plain TCP, which decodes and answers anyone: "+
			"set raftTlsCertPath and raftTlsKeyPath (see docs/security.md), or keep the port on a private network", "raft", rc.BindAddr)
	}
	rc.HeartbeatTimeout, rc.ElectionTimeout = r.HeartbeatTimeout, r.ElectionTimeout
	rc.LeaderLeaseTimeout = r.HeartbeatTimeout * 5 / 6
	rc.LogNoSync = r.LogNoSync
	// flushDiskType says when a group's send is durable as it does a
	// single broker's: SYNC_FLUSH acknowledges an entry once it is fsynced
	// on a majority; ASYNC_FLUSH once it is in a majority's page cache,
	// fsynced within the store's flush interval (a process crash loses
	// nothing acknowledged; an OS crash of a majority the last interval).
	// (A negative FlushInterval, a test's store without the background
	// fsync, leaves the log fsyncing every write.)
	if o := sopts; o.FlushMode == store.AsyncFlush {
		o.EnsureDefaults()
		rc.LogSyncInterval = max(o.FlushInterval, 0)
	}
	// Zero keeps replica's default (its ensureDefaults fills them in).
	rc.SnapshotInterval, rc.SnapshotThreshold, rc.TrailingLogs = r.SnapshotInterval, r.SnapshotThreshold, r.TrailingLogs
	rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: raftLog{b.log}})
	return rc, nil
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
	rc, err := b.replicaConfig(sopts)
	if err != nil {
		return nil, err
	}
	n, err := replica.New(rc)
	if err != nil {
		return nil, err
	}
	be := replica.NewBackend(n, b.cfg.Replication.ProposeTimeout)
	c, err := core.OpenBackend(ccfg, be)
	if err != nil {
		_ = n.Shutdown()
		return nil, err
	}
	hook.Store(c)
	b.node, b.group = n, be
	return c, nil
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
			b.reg.RegisterAll()
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

// Runtime info keys of the store's disk: Java's commitLogDiskRatio (the
// fraction of the store's filesystem in use, 0 to 1), and Runnel's
// diskFull ("true" while sends are refused for the disk, as the console
// shows).
const (
	InfoDiskRatio = "commitLogDiskRatio"
	InfoDiskFull  = "diskFull"
)

// runtimeInfo is the process's runtime figures: its role as registered,
// its disk and, on a group node, its raft state.
func (b *Broker) runtimeInfo() map[string]string {
	table := map[string]string{}
	role := "SLAVE"
	if b.IsMaster() {
		role = "MASTER"
	}
	table[InfoBrokerRole] = role
	if pct, full := b.Store().DiskUsage(); pct >= 0 {
		table[InfoDiskRatio] = strconv.FormatFloat(pct/100, 'f', 4, 64)
		table[InfoDiskFull] = strconv.FormatBool(full)
	}
	st, ok := b.ReplicaStatus()
	if !ok {
		return table
	}
	table[InfoRaftState] = st.State
	table[InfoRaftTerm] = strconv.FormatUint(st.Term, 10)
	table[InfoRaftApplied] = strconv.FormatUint(st.AppliedIndex, 10)
	table[InfoRaftCommit] = strconv.FormatUint(st.CommitIndex, 10)
	table[InfoRaftLeaderID] = st.LeaderID
	return table
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
		return b.cfg.BrokerID == core.MasterBrokerID
	}
	return b.master.Load()
}

// consumeSlowlyBytes is Java's accessMessageInMemoryMaxRatio (40) of this
// machine's memory: the backlog past which a master suggests a slave.
func consumeSlowlyBytes() int64 { return physicalMemory() * 40 / 100 }
