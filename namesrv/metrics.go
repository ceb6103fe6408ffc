package namesrv

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/runnelmq/runnel/internal/promserve"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// MetricsConfig configures the name server's Prometheus exporter. Java's
// name server has none; the keys are the broker's.
type MetricsConfig struct {
	// ExporterType (metricsExporterType): "PROM" serves /metrics. Default
	// "DISABLE".
	ExporterType string
	// PromHost (metricsPromExporterHost). Default "": every interface.
	PromHost string
	// PromPort (metricsPromExporterPort). Default 5558, beside a broker's
	// 5557 on the same host; 0 picks a free port.
	PromPort int
}

// Enabled reports whether /metrics is served.
func (c MetricsConfig) Enabled() bool { return strings.EqualFold(c.ExporterType, "PROM") }

// SetAddr turns the exporter on at addr (host:port, as a flag gives it),
// or off when addr is "".
func (c *MetricsConfig) SetAddr(addr string) error {
	if addr == "" {
		c.ExporterType = "DISABLE"
		return nil
	}
	host, port, err := promserve.SplitAddr(addr)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	c.ExporterType, c.PromHost, c.PromPort = "PROM", host, port
	return nil
}

func (c MetricsConfig) validate() error {
	switch strings.ToUpper(c.ExporterType) {
	case "", "DISABLE", "PROM", "OTLP_GRPC", "LOG":
	default:
		return fmt.Errorf("%w: Metrics.ExporterType %q is none of DISABLE, PROM, OTLP_GRPC, LOG", ErrBadConfig, c.ExporterType)
	}
	if c.PromPort < 0 || c.PromPort > 65535 {
		return fmt.Errorf("%w: Metrics.PromPort %d", ErrBadConfig, c.PromPort)
	}
	return nil
}

// exporter is the name server's metrics: the route table read at scrape
// time (rocketmq_namesrv_brokers by cluster, rocketmq_namesrv_topics) and
// every request counted by request and response code
// (rocketmq_namesrv_requests_total, labelled as rocketmq_rpc_latency is).
type exporter struct {
	s        *Server
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	series   sync.Map // [2]int16 -> prometheus.Counter
	srv      *promserve.Server

	brokers, topics *prometheus.Desc
}

func newExporter(s *Server) *exporter {
	e := &exporter{
		s:   s,
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_namesrv_requests_total", Help: "Requests served, by request and response code",
		}, []string{"request_code", "response_code"}),
		brokers: prometheus.NewDesc("rocketmq_namesrv_brokers", "Live brokers registered", []string{"cluster"}, nil),
		topics:  prometheus.NewDesc("rocketmq_namesrv_topics", "Topics in the route table", nil, nil),
	}
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels{"node_type": "namesrv"}, e.reg)
	wrapped.MustRegister(e.requests, e)
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e
}

func (e *exporter) Describe(ch chan<- *prometheus.Desc) { ch <- e.brokers; ch <- e.topics }

func (e *exporter) Collect(ch chan<- prometheus.Metric) {
	byCluster := map[string]int{}
	for _, b := range e.s.table.LiveBrokers() {
		byCluster[b.ClusterName]++
	}
	for c, n := range byCluster {
		ch <- prometheus.MustNewConstMetric(e.brokers, prometheus.GaugeValue, float64(n), c)
	}
	ch <- prometheus.MustNewConstMetric(e.topics, prometheus.GaugeValue, float64(len(e.s.table.Topics())))
}

func (e *exporter) interceptor() remoting.Interceptor {
	return remoting.Interceptor{Response: func(_ *remoting.Conn, req, resp *protocol.Command, _ time.Duration) {
		k := [2]int16{req.Code, -32768}
		if resp != nil {
			k[1] = resp.Code
		}
		if v, ok := e.series.Load(k); ok {
			v.(prometheus.Counter).Inc()
			return
		}
		reqName, respName := codeLabel(protocol.RequestCodeName(k[0])), "none"
		if resp != nil {
			respName = codeLabel(protocol.ResponseCodeName(k[1]))
		}
		c := e.requests.WithLabelValues(reqName, respName)
		if reqName != "unknown" && respName != "unknown" { // made-up codes are not cached one by one
			e.series.Store(k, c)
		}
		c.Inc()
	}}
}

// codeLabel is Java's label of a code: its constant's name in lower case.
func codeLabel(name string) string {
	if strings.HasPrefix(name, "CODE_") {
		return "unknown"
	}
	return strings.ToLower(name)
}

func (e *exporter) start() error {
	addr := net.JoinHostPort(e.s.cfg.Metrics.PromHost, strconv.Itoa(e.s.cfg.Metrics.PromPort))
	srv, err := promserve.Listen(addr, e.reg, e.s.log)
	if err != nil {
		return fmt.Errorf("namesrv: metrics: %w", err)
	}
	e.srv = srv
	e.s.log.Info("metrics: serving", "url", "http://"+srv.Addr()+"/metrics")
	return nil
}

func (e *exporter) close() error {
	if e == nil || e.srv == nil {
		return nil
	}
	return e.srv.Close()
}

// MetricsURL returns where /metrics is served, "" when it is not.
func (s *Server) MetricsURL() string {
	if s.metrics == nil || s.metrics.srv == nil {
		return ""
	}
	return "http://" + s.metrics.srv.Addr() + "/metrics"
}
