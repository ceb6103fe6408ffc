package metrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// rpcLatencyBuckets are Java's RemotingMetricsManager buckets, in ms.
var rpcLatencyBuckets = []float64{1, 3, 5, 7, 10, 100, 1000, 2000, 3000}

// noAnswer is the response code key of a request answered with nothing.
const noAnswer int16 = -32768

// rpcLatency is rocketmq_rpc_latency: every request's time from dispatch
// to the write of its answer, by request and response code.
type rpcLatency struct {
	h      *prometheus.HistogramVec
	series sync.Map // rpcKey -> prometheus.Observer
	grpc   sync.Map // grpcKey -> prometheus.Observer (grpc.go)
}

type rpcKey struct {
	req, resp   int16
	longPolling bool
	oneway      bool
}

func newRPCLatency() *rpcLatency {
	return &rpcLatency{h: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rocketmq_rpc_latency", Help: "Rpc latency (milliseconds)", Buckets: rpcLatencyBuckets,
	}, []string{"protocol_type", "request_code", "response_code", "is_long_polling", "result"})}
}

func (r *rpcLatency) observe(req, resp *protocol.Command, longPolling bool, elapsed time.Duration) {
	k := rpcKey{req: req.Code, resp: noAnswer, longPolling: longPolling, oneway: req.IsOneway()}
	if resp != nil {
		k.resp = resp.Code
	}
	v, ok := r.series.Load(k)
	if !ok {
		v = r.child(k)
	}
	v.(prometheus.Observer).Observe(float64(elapsed) / float64(time.Millisecond))
}

// child finds the series of k. Unknown codes all share the "unknown"
// series and are not cached under their own key, so neither the cache
// nor the series grow with what clients make up.
func (r *rpcLatency) child(k rpcKey) prometheus.Observer {
	reqName := codeLabel(protocol.RequestCodeName(k.req))
	respName := "none"
	if k.resp != noAnswer {
		respName = codeLabel(protocol.ResponseCodeName(k.resp))
	}
	result := "success"
	switch {
	case k.oneway:
		result = "oneway"
	case k.resp == noAnswer:
		result = "process_request_failed"
	}
	o := r.h.WithLabelValues(core.ProtocolRemoting, reqName, respName, boolLabel(k.longPolling), result)
	if reqName != "unknown" && respName != "unknown" {
		r.series.Store(k, o)
	}
	return o
}

// codeLabel is Java's label of a code: its constant's name in lower case.
func codeLabel(name string) string {
	if strings.HasPrefix(name, "CODE_") {
		return "unknown"
	}
	return strings.ToLower(name)
}
