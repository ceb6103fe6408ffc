package metrics

import "github.com/prometheus/client_golang/prometheus"

// RaftStatus is a replicated group node's raft state as exported: what
// Deps.Raft reports at scrape time.
type RaftStatus struct {
	// ID is the node's dLegerSelfId: the raft_id label, which tells a
	// group's nodes apart (they share the broker name, node_id).
	ID string
	// Role is raft's state: Leader, Follower, Candidate or Shutdown.
	Role string
	// Term is the current term; CommitIndex the last log index known
	// committed; AppliedIndex the last one applied to the store; LastIndex
	// the last one in the node's log.
	Term, CommitIndex, AppliedIndex, LastIndex uint64
}

// raftRoles are the values of rocketmq_raft_role's role label: every one
// is exported, 1 for the node's role and 0 for the others, so a role
// change leaves no stale series behind and "role=Leader == 1" finds the
// leader.
var raftRoles = []string{"Leader", "Follower", "Candidate", "Shutdown"}

// raftCollector exports a group node's raft figures, read when scraped.
// RocketMQ 5 has no names for them (DLedger exports none); these follow
// its rocketmq_ prefix.
type raftCollector struct {
	status                      func() (RaftStatus, bool)
	role, term, commit, applied *prometheus.Desc
	last                        *prometheus.Desc
}

func newRaftCollector(status func() (RaftStatus, bool)) *raftCollector {
	id := []string{"raft_id"}
	return &raftCollector{
		status: status,
		role: prometheus.NewDesc("rocketmq_raft_role", "Raft role of this replicated group node: 1 for its role, 0 for the others",
			[]string{"raft_id", "role"}, nil),
		term:    prometheus.NewDesc("rocketmq_raft_term", "Raft current term", id, nil),
		commit:  prometheus.NewDesc("rocketmq_raft_commit_index", "Last raft log index known committed", id, nil),
		applied: prometheus.NewDesc("rocketmq_raft_applied_index", "Last raft log index applied to the store", id, nil),
		last:    prometheus.NewDesc("rocketmq_raft_last_index", "Last raft log index in this node's log", id, nil),
	}
}

func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.role, c.term, c.commit, c.applied, c.last} {
		ch <- d
	}
}

func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.status()
	if !ok {
		return
	}
	for _, r := range raftRoles {
		v := 0.0
		if r == st.Role {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.role, prometheus.GaugeValue, v, st.ID, r)
	}
	gauge := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), st.ID)
	}
	gauge(c.term, st.Term)
	gauge(c.commit, st.CommitIndex)
	gauge(c.applied, st.AppliedIndex)
	gauge(c.last, st.LastIndex)
}
