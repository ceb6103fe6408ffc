package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// A replicated group's /metrics carry each node's raft state: the leader's
// rocketmq_raft_role is Leader and the others' Follower, every node is in
// the same term, and sends move the applied index of every node to the
// leader's commit index.
func TestGroupRaftMetrics(t *testing.T) {
	c := rcCluster(t, cluster.Group(3), cluster.Configure(func(_ int, cfg *broker.Config) {
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
		fams, err := scrapeURL(c.Broker(i).MetricsURL())
		if err != nil {
			return raft{}, err
		}
		id := map[string]string{"raft_id": fmt.Sprintf("n%d", i), "node_id": "broker-a", "cluster": c.Broker(i).Config().ClusterName}
		var r raft
		for _, m := range familySeries(fams, "rocketmq_raft_role", id) {
			if m.GetGauge().GetValue() == 1 {
				if r.role != "" {
					return r, fmt.Errorf("node %d: roles %s and %s", i, r.role, labelValue(m, "role"))
				}
				r.role = labelValue(m, "role")
			}
		}
		for name, dst := range map[string]*float64{"rocketmq_raft_term": &r.term,
			"rocketmq_raft_commit_index": &r.commit, "rocketmq_raft_applied_index": &r.applied} {
			ms := familySeries(fams, name, id)
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

// scrapeURL GETs a /metrics URL and parses the exposition.
func scrapeURL(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	tp := expfmt.NewTextParser(model.UTF8Validation)
	return tp.TextToMetricFamilies(resp.Body)
}

// familySeries returns the series of family name whose labels include want.
func familySeries(fams map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			if labelValue(m, k) != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
