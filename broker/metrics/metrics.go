package metrics

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/internal/promserve"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Deps is what the exporter reads and how it names the broker.
type Deps struct {
	// Core is read at scrape time; nil exports the traffic and RPC
	// figures alone.
	Core *core.Core
	// Cluster and Node are the cluster and node_id labels (Java:
	// brokerClusterName and brokerName).
	Cluster, Node string
	// StoreDir is measured for rocketmq_storage_size; "" leaves it out.
	StoreDir string
	// Now is the clock of lag latency; it must be the store's. Default
	// time.Now.
	Now func() time.Time
	// Raft reports a replicated group node's raft state when scraped (ok
	// false, or a nil Raft: not a group node, no rocketmq_raft_* series).
	Raft   func() (st RaftStatus, ok bool)
	Logger *slog.Logger
}

// Metrics is one broker's exporter: its registry, the interceptor that
// counts traffic, and the HTTP server.
type Metrics struct {
	cfg      Config
	core     *core.Core
	storeDir string
	now      func() time.Time
	log      *slog.Logger

	reg            *prometheus.Registry
	topics, groups *labelSet
	traffic        *traffic
	rpc            *rpcLatency
	srv            *promserve.Server
}

// New builds the exporter; nothing listens until Start.
func New(cfg Config, d Deps) *Metrics {
	cfg.EnsureDefaults()
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	m := &Metrics{
		cfg: cfg, core: d.Core, storeDir: d.StoreDir, now: d.Now, log: d.Logger,
		reg:    prometheus.NewRegistry(),
		topics: newLabelSet(cfg.TopicLimit),
		groups: newLabelSet(cfg.GroupLimit),
		rpc:    newRPCLatency(),
	}
	m.traffic = newTraffic(m.topics, m.groups)
	broker := prometheus.WrapRegistererWith(prometheus.Labels{
		"cluster": d.Cluster, "node_type": "broker", "node_id": d.Node,
	}, m.reg)
	broker.MustRegister(m.traffic.collectors()...)
	broker.MustRegister(m.rpc.h, newCollector(m))
	if d.Raft != nil {
		broker.MustRegister(newRaftCollector(d.Raft))
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Gatherer is the registry /metrics serves (tests read it directly).
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Interceptor counts the traffic and times every request. It goes first
// in the server's chain: only then does its Response hook run for
// requests a later interceptor (ACL) refuses.
func (m *Metrics) Interceptor() remoting.Interceptor {
	return remoting.Interceptor{Response: m.observe}
}

func (m *Metrics) observe(_ *remoting.Conn, req, resp *protocol.Command, elapsed time.Duration) {
	longPolling := false
	switch req.Code {
	case protocol.ReqSendMessage, protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage:
		if resp != nil && stored(resp.Code) {
			m.traffic.sent(req)
		}
	case protocol.ReqPullMessage, protocol.ReqLitePullMessage:
		// One scan of the header without building the ext map; a header
		// that does not decode still has the fields that do.
		var h protocol.PullMessageRequestHeader
		err := h.DecodeCommand(req)
		longPolling = protocol.PullHasSuspend(h.SysFlag)
		if resp != nil && resp.Code == protocol.RespSuccess {
			m.traffic.pulledMsgs(req, resp, &h, err)
		}
	}
	m.rpc.observe(req, resp, longPolling, elapsed)
}

// stored reports whether a send answered code was stored (Java
// PutMessageResult.isOk: PUT_OK and the flush and slave timeouts).
func stored(code int16) bool {
	switch code {
	case protocol.RespSuccess, protocol.RespFlushDiskTimeout, protocol.RespFlushSlaveTimeout, protocol.RespSlaveNotAvailable:
		return true
	}
	return false
}

// Start serves /metrics when the exporter type is PROM.
func (m *Metrics) Start() error {
	if t := m.cfg.ExporterType; t == ExporterOTLPGRPC || t == ExporterLog {
		m.log.Warn("metrics: exporter type not supported, nothing exported (PROM is)", "metricsExporterType", t)
	}
	if !m.cfg.Enabled() {
		return nil
	}
	srv, err := promserve.Listen(m.cfg.Addr(), m.reg, m.log)
	if err != nil {
		return err
	}
	m.srv = srv
	m.log.Info("metrics: serving", "url", m.URL())
	return nil
}

// URL is where /metrics is served, "" when it is not.
func (m *Metrics) URL() string {
	if m.srv == nil {
		return ""
	}
	return "http://" + m.srv.Addr() + "/metrics"
}

// Addr is the HTTP server's address, "" when it is not serving.
func (m *Metrics) Addr() string {
	if m.srv == nil {
		return ""
	}
	return m.srv.Addr()
}

// Close shuts the HTTP server down, after the scrapes in progress.
func (m *Metrics) Close() error {
	if m.srv == nil {
		return nil
	}
	return m.srv.Close()
}
