package broker

import (
	"github.com/runnelmq/runnel/broker/metrics"
)

// newMetrics builds the broker's exporter over its core. It exists even
// when not exported (its interceptor is then left out of the server).
func (b *Broker) newMetrics() {
	b.metrics = metrics.New(b.cfg.Metrics, metrics.Deps{
		Core: b.core, Cluster: b.cfg.ClusterName, Node: b.cfg.BrokerName,
		StoreDir: b.cfg.StoreDir, Now: b.cfg.Now, Logger: b.log,
		Raft: b.raftMetrics,
	})
}

// raftMetrics is the node's raft state for the exporter (ok false on a
// single broker).
func (b *Broker) raftMetrics() (metrics.RaftStatus, bool) {
	st, ok := b.ReplicaStatus()
	if !ok {
		return metrics.RaftStatus{}, false
	}
	return metrics.RaftStatus{ID: st.ID, Role: st.State, Term: st.Term,
		CommitIndex: st.CommitIndex, AppliedIndex: st.AppliedIndex, LastIndex: st.LastIndex}, true
}

// MetricsURL returns where /metrics is served, "" when it is not (the
// exporter type is not PROM, or before Start).
func (b *Broker) MetricsURL() string { return b.metrics.URL() }

// MetricsAddr returns the metrics HTTP server's address, "" when none.
func (b *Broker) MetricsAddr() string { return b.metrics.Addr() }
