package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/promtest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// A replicated group's /metrics carry each node's raft state: the leader's
// rocketmq_raft_role is Leader and the others' Follower, every node is in
// the same term, and sends move the applied index of every node to the
// leader's commit index.
func TestGroupRaftMetrics(t *testing.T) {
	c := rcCluster(t, cluster.Group(3), cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Metrics = metrics.Config{ExporterType: metrics.ExporterProm, PromHost: "127.0.0.1", PromPort: 0}
	}))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)

	// raft is one node's figures, checked to be labelled as that node.
	type raft struct {
		role                  string
		term, commit, applied float64
	}
	read := func(i int) (raft, error) {
		fams, err := promtest.Scrape(c.Broker(i).MetricsURL())
		if err != nil {
			return raft{}, err
		}
		id := map[string]string{"raft_id": fmt.Sprintf("n%d", i), "node_id": "broker-a", "cluster": c.Broker(i).Config().ClusterName}
		var r raft
		for _, m := range promtest.Series(fams, "rocketmq_raft_role", id) {
			if m.GetGauge().GetValue() == 1 {
				if r.role != "" {
					return r, fmt.Errorf("node %d: roles %s and %s", i, r.role, promtest.Labels(m)["role"])
				}
				r.role = promtest.Labels(m)["role"]
			}
		}
		for name, dst := range map[string]*float64{"rocketmq_raft_term": &r.term,
			"rocketmq_raft_commit_index": &r.commit, "rocketmq_raft_applied_index": &r.applied} {
			ms := promtest.Series(fams, name, id)
			if len(ms) != 1 {
				return r, fmt.Errorf("node %d: %d series of %s%v", i, len(ms), name, id)
			}
			*dst = ms[0].GetGauge().GetValue()
		}
		return r, nil
	}
	// settled waits until the group agrees: the roles, one term, every
	// node applied up to the leader's commit index; it returns the
	// leader's figures.
	settled := func(what string) raft {
		t.Helper()
		var lr raft
		testwait.Until(t, 20*time.Second, what, func() error {
			var err error
			if lr, err = read(l); err != nil {
				return err
			}
			if lr.role != "Leader" || lr.term < 1 || lr.applied > lr.commit {
				return fmt.Errorf("leader n%d: %+v", l, lr)
			}
			for i := range c.Brokers() {
				if i == l {
					continue
				}
				r, err := read(i)
				if err != nil {
					return err
				}
				if r.role != "Follower" || r.term != lr.term || r.applied != lr.commit {
					return fmt.Errorf("node n%d %+v, leader n%d %+v", i, r, l, lr)
				}
			}
			return nil
		})
		return lr
	}
	before := settled("the group's raft figures agreeing")

	p := rcProducer(t, c)
	for i := range 10 {
		sendUntilOK(t, p, "RaftMetrics", body(i))
	}
	after := settled("every node applied the sends")
	if after.applied <= before.applied || after.term != before.term {
		t.Fatalf("after 10 sends the leader's figures went from %+v to %+v", before, after)
	}
}
