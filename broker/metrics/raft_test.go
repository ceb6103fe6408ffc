package metrics

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestRaftSeries checks the raft gauges as Deps.Raft reports them when
// gathered: one role series per raft role, 1 for the node's, each series
// labelled with the node's raft_id beside Java's labels; and none at all
// for a broker that is not a group node.
func TestRaftSeries(t *testing.T) {
	st := RaftStatus{ID: "n1", Role: "Follower", Term: 3, CommitIndex: 42, AppliedIndex: 41, LastIndex: 43}
	m := New(Config{}, Deps{Cluster: "C", Node: "broker-a", Raft: func() (RaftStatus, bool) { return st, true }})
	id := "cluster=C,node_id=broker-a,node_type=broker,raft_id=n1"
	want := map[string]float64{
		"rocketmq_raft_applied_index{" + id + "}":       41,
		"rocketmq_raft_commit_index{" + id + "}":        42,
		"rocketmq_raft_last_index{" + id + "}":          43,
		"rocketmq_raft_term{" + id + "}":                3,
		"rocketmq_raft_role{" + id + ",role=Candidate}": 0,
		"rocketmq_raft_role{" + id + ",role=Follower}":  1,
		"rocketmq_raft_role{" + id + ",role=Leader}":    0,
		"rocketmq_raft_role{" + id + ",role=Shutdown}":  0,
	}
	if got := raftGauges(t, m); !maps.Equal(got, want) {
		t.Fatalf("raft series\n%v\nwant\n%v", got, want)
	}
	if got := raftGauges(t, New(Config{}, Deps{Cluster: "C", Node: "broker-a"})); len(got) != 0 {
		t.Fatalf("a broker outside a group exports %v", got)
	}
	notYet := New(Config{}, Deps{Raft: func() (RaftStatus, bool) { return RaftStatus{}, false }})
	if got := raftGauges(t, notYet); len(got) != 0 {
		t.Fatalf("Raft reporting no status exports %v", got)
	}
}

// raftGauges gathers m's rocketmq_raft_* gauges as "name{k=v,...}" (labels
// sorted) to value.
func raftGauges(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "rocketmq_raft_") {
			continue
		}
		for _, s := range f.Metric {
			var ls []string
			for _, l := range s.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			slices.Sort(ls)
			out[fmt.Sprintf("%s{%s}", f.GetName(), strings.Join(ls, ","))] = s.GetGauge().GetValue()
		}
	}
	return out
}
