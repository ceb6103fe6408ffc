package broker

import (
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/remoting"
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

// interceptors are the remoting server's, in chain order. The metrics
// interceptor comes first: Response hooks run for the interceptors whose
// Request ran, so the first one sees every request, refused ones (ACL)
// included, with its final answer. Config.Interceptors come last, behind
// ACL's check.
func (b *Broker) interceptors() []remoting.Interceptor {
	var ics []remoting.Interceptor
	if b.cfg.Metrics.Enabled() {
		ics = append(ics, b.metrics.Interceptor())
	}
	if b.acl != nil {
		ics = append(ics, b.acl.Interceptor())
	}
	if b.auth.Enabled() {
		ics = append(ics, b.authInterceptor())
	}
	return append(ics, b.cfg.Interceptors...)
}

// MetricsURL returns where /metrics is served, "" when it is not (the
// exporter type is not PROM, or before Start).
func (b *Broker) MetricsURL() string { return b.metrics.URL() }

// MetricsAddr returns the metrics HTTP server's address, "" when none.
func (b *Broker) MetricsAddr() string { return b.metrics.Addr() }
