//go:build !race

// The official v2 client and the v5 SDK's consumers race inside
// themselves under -race; scripts/test.sh runs this file in its second
// pass.

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	rmq5 "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/metrics"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/promtest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestV5ClientsSayTheirProtocol: the group views (GET_CONSUMER_CONNECTION_LIST,
// GET_PRODUCER_CONNECTION_LIST, as runnelctl and the console read them)
// and the connection gauges tell a RocketMQ 5 SDK client ("grpc_v2") from
// a remoting one, and the gRPC door's calls are timed in
// rocketmq_rpc_latency under protocol_type grpc_v2.
func TestV5ClientsSayTheirProtocol(t *testing.T) {
	c := startV5(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Metrics = metrics.Config{ExporterType: metrics.ExporterProm, PromHost: "127.0.0.1", PromPort: 0}
	}))
	topic := "V5Protocol"
	p5 := newV5Producer(t, c, []string{topic})
	for i := range 3 {
		v5Send(t, p5, &rmq5.Message{Topic: topic, Body: []byte(body(i))})
	}
	newV5SimpleConsumer(t, c, "proto-v5", map[string]*rmq5.FilterExpression{topic: rmq5.SUB_ALL}, 5*time.Second)
	startListener(t, c, "proto-v2", topic, "*", func(*primitive.MessageExt) consumer.ConsumeResult {
		return consumer.ConsumeSuccess
	})

	a := aclAdmin(t, c, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for group, want := range map[string]string{"proto-v5": "grpc_v2", "proto-v2": "remoting"} {
		var conn *ouradmin.ConsumerConnection
		testwait.For(t, 20*time.Second, group+" online", func() bool {
			var err error
			conn, err = a.ConsumerConnections(ctx, group)
			return err == nil && len(conn.Clients) == 1
		})
		if cl := conn.Clients[0]; cl.Protocol != want || cl.Language != "GO" {
			t.Errorf("%s's client: protocol %q language %q, want %q GO", group, cl.Protocol, cl.Language, want)
		}
	}
	prods, err := a.ProducerConnections(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(prods) != 1 || prods[0].Protocol != "grpc_v2" {
		t.Errorf("producers of %s (the v5 SDK's producer group is its topic): %+v", topic, prods)
	}

	fams, err := promtest.Scrape(c.Broker(0).MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name string, labels map[string]string) float64 {
		var n float64
		for _, m := range promtest.Series(fams, name, labels) {
			v, _ := promtest.Value(m)
			n += v
		}
		return n
	}
	if n := gauge("rocketmq_consumer_connections", map[string]string{"consumer_group": "proto-v5", "protocol_type": "grpc_v2"}); n != 1 {
		t.Errorf("consumer_connections{proto-v5, grpc_v2} = %v, want 1", n)
	}
	if n := gauge("rocketmq_consumer_connections", map[string]string{"consumer_group": "proto-v2", "protocol_type": "remoting"}); n != 1 {
		t.Errorf("consumer_connections{proto-v2, remoting} = %v, want 1", n)
	}
	if n := gauge("rocketmq_producer_connections", map[string]string{"protocol_type": "grpc_v2"}); n != 1 {
		t.Errorf("producer_connections{grpc_v2} = %v, want 1", n)
	}
	var sends uint64
	for _, m := range promtest.Series(fams, "rocketmq_rpc_latency", map[string]string{"protocol_type": "grpc_v2", "request_code": "send_message", "response_code": "ok"}) {
		sends += m.Histogram.GetSampleCount()
	}
	if sends != 3 {
		t.Errorf("rpc_latency{grpc_v2, send_message, ok} counted %d calls, want 3", sends)
	}
}
