// Package metrics is the broker's Prometheus exporter, named and labelled
// as RocketMQ 5's (BrokerMetricsManager, RemotingMetricsManager,
// DefaultStoreMetricsManager) so that dashboards built for a Java broker
// work unchanged. Every series carries Java's cluster, node_type ("broker")
// and node_id (the broker name) labels.
//
// Two kinds of figures, two places they come from:
//   - traffic (rocketmq_messages_in_total, rocketmq_throughput_in_total,
//     rocketmq_message_size, rocketmq_messages_out_total,
//     rocketmq_throughput_out_total) and rocketmq_rpc_latency are counted
//     by a remoting interceptor (Interceptor) from each request and its
//     answer: a send answered as stored, a pull answered with messages.
//     The hot path is an ext-field lookup, a cached series per topic (or
//     topic and group) found in a sync.Map, and atomic adds: no label
//     hashing, no string building, no lock.
//   - everything else (lag, in-flight, dead letters, connections, topic
//     and group numbers, storage size) is read from the core when
//     /metrics is scraped (collector.go), never on the send path; so are
//     a replicated group node's raft figures (raft.go: rocketmq_raft_role,
//     _term, _commit_index, _applied_index, _last_index, labelled raft_id
//     since a group's nodes share node_id).
//
// Cardinality is bounded: at most Config.TopicLimit topic label values and
// Config.GroupLimit consumer_group label values are ever exported; topics
// and groups seen after that are counted under the value "_other".
// Unknown request and response codes are "unknown" in rpc_latency.
//
// The HTTP server (internal/promserve) serves /metrics on
// metricsPromExporterHost:metricsPromExporterPort when metricsExporterType
// is PROM, is started by Start and shut down by Close; the broker closes
// it before its store, which a scrape reads.
package metrics
