package metrics

import (
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/runnelmq/runnel/broker/core"
)

// The gRPC door's figures, under the names the remoting door's are
// exported with: rocketmq_rpc_latency with protocol_type "grpc_v2" (Java's
// ChannelProtocolType.GRPC_V2), its request_code the RPC's name in Java's
// label form ("send_message") and its response_code the status code's
// ("ok", "message_not_found"); the messages a gRPC send stored and a
// receive delivered count in rocketmq_messages_in_total and
// rocketmq_messages_out_total as the remoting door's do.

// grpcKey names a gRPC latency series (rpcLatency.grpc caches them).
type grpcKey struct {
	rpc, code       string
	longPolling, ok bool
}

// ObserveGRPC times one gRPC call: rpc is its method ("SendMessage"),
// code its answer's status code name ("OK"), ok whether it was answered
// at all (false: the call failed before a status).
func (m *Metrics) ObserveGRPC(rpc, code string, longPolling, answered bool, elapsed time.Duration) {
	k := grpcKey{rpc: rpc, code: code, longPolling: longPolling, ok: answered}
	v, found := m.rpc.grpc.Load(k)
	if !found {
		result := "success"
		if !answered {
			result = "process_request_failed"
		}
		o := m.rpc.h.WithLabelValues(core.ProtocolGRPC, snake(rpc), strings.ToLower(code), boolLabel(longPolling), result)
		v, _ = m.rpc.grpc.LoadOrStore(k, o)
	}
	v.(prometheus.Observer).Observe(float64(elapsed) / float64(time.Millisecond))
}

// SentGRPC counts the messages of one gRPC send the broker stored: their
// topic, their type ("normal", "fifo", "delay", "transaction") and body
// sizes.
func (m *Metrics) SentGRPC(topic, messageType string, bodySizes []int) {
	typ := typeNormal
	for i, n := range msgTypeNames {
		if n == messageType {
			typ = msgType(i)
		}
	}
	set := m.traffic.inSet(topic, typ)
	bytes := 0
	for _, n := range bodySizes {
		bytes += n
		set.size.Observe(float64(n))
	}
	set.msgs.Add(float64(len(bodySizes)))
	set.bytes.Add(float64(bytes))
}

// DeliveredGRPC counts messages a gRPC receive or pull delivered to a
// consumer group.
func (m *Metrics) DeliveredGRPC(topic, group string, msgs, bytes int) {
	p := m.traffic.outPair(topic, group)
	p.msgs.Add(float64(msgs))
	p.bytes.Add(float64(bytes))
}

// snake is a method name in Java's label form: "SendMessage" is
// "send_message".
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
