package metrics_test

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestScrapeAfterKnownTraffic sends messages of known sizes to known
// topics (single, V2 and batch sends), lets a consumer group pull a known
// number and commit a known offset, sends one message to the group's DLQ,
// and checks what /metrics says over HTTP, exactly.
func TestScrapeAfterKnownTraffic(t *testing.T) {
	clk := fakeclock.Default()
	b := startBroker(t, func(c *config.Config) { c.Now = clk.Now })
	if b.MetricsURL() == "" {
		t.Fatal("no metrics URL with metricsExporterType=PROM")
	}
	before := scrape(t, b.MetricsURL())
	topicsBefore := value(t, before, "rocketmq_topic_number", nil)

	rc := newRawClient(t, b.Addr())
	rc.createTopic("MA", 1)
	rc.createTopic("MB", 1)
	// MA: three single sends with long keys, 100 + 2000 + 5000 bytes.
	for _, n := range []int{100, 2000, 5000} {
		rc.ok(protocol.ReqSendMessage, sendHeader("MA", nil).Encode(), bytes.Repeat([]byte("a"), n))
	}
	// MB: two V2 sends (10, 20 bytes) and a batch of three (1, 2, 3 bytes).
	for _, n := range []int{10, 20} {
		rc.ok(protocol.ReqSendMessageV2, sendHeader("MB", nil).EncodeV2(), bytes.Repeat([]byte("b"), n))
	}
	batch, err := protocol.AppendBatch(nil, []*protocol.Message{
		{Topic: "MB", Body: []byte("1")}, {Topic: "MB", Body: []byte("22")}, {Topic: "MB", Body: []byte("333")},
	})
	if err != nil {
		t.Fatal(err)
	}
	rc.ok(protocol.ReqSendBatchMessage, sendHeader("MB", nil).EncodeV2(), batch)
	// A refused send (no such queue) counts nowhere but in rpc_latency.
	bad := sendHeader("MA", nil)
	bad.QueueID = 99
	if r := rc.call(protocol.ReqSendMessage, bad.Encode(), []byte("x")); r.Code != protocol.RespSystemError {
		t.Fatalf("a send to queue 99 of 1 answered %s", protocol.ResponseCodeName(r.Code))
	}

	// Consumer group cg (push) subscribes to MA; producer group pg.
	rc.heartbeat(protocol.HeartbeatData{
		ClientID:        "metrics-test@1",
		ProducerDataSet: []protocol.ProducerData{{GroupName: "pg"}},
		ConsumerDataSet: []protocol.ConsumerData{{
			GroupName: "cg", ConsumeType: protocol.ConsumePassively, MessageModel: protocol.MessageModelClustering,
			ConsumeFromWhere:    protocol.ConsumeFromFirstOffset,
			SubscriptionDataSet: []protocol.SubscriptionData{protocol.BuildSubscriptionData("MA", "*")},
		}},
	})

	clk.Advance(10 * time.Second) // the messages are now 10 s old
	pull := rc.ok(protocol.ReqPullMessage, pullHeader("cg", "MA", 0, 2), nil)
	msgs, err := message.DecodeMessages(pull.Body)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("pulled %d messages (%v), want 2", len(msgs), err)
	}
	rc.ok(protocol.ReqUpdateConsumerOffset, protocol.UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: "cg", Topic: "MA", QueueID: 0, CommitOffset: 1}.Encode(), nil)
	// The first message goes to cg's DLQ.
	rc.ok(protocol.ReqConsumerSendMsgBack, protocol.ConsumerSendMsgBackRequestHeader{
		Offset: msgs[0].CommitLogOffset, Group: "cg", DelayLevel: -1, OriginTopic: "MA", MaxReconsumeTimes: -1,
	}.Encode(), nil)

	fams := scrape(t, b.MetricsURL())
	node := map[string]string{"cluster": "DefaultCluster", "node_type": "broker", "node_id": "broker-a"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range node {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	eq := func(name string, labels map[string]string, want float64) {
		t.Helper()
		if got := value(t, fams, name, labels); got != want {
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
		}
	}

	rpc := func(req, resp string) uint64 {
		t.Helper()
		ms := series(fams, "rocketmq_rpc_latency", with("protocol_type", "remoting", "request_code", req, "response_code", resp, "result", "success"))
		var n uint64
		for _, m := range ms {
			n += m.Histogram.GetSampleCount()
		}
		return n
	}
	in := func(topic string) map[string]string {
		return with("topic", topic, "message_type", "normal", "is_system", "false")
	}
	eq("rocketmq_messages_in_total", in("MA"), 3)
	eq("rocketmq_throughput_in_total", in("MA"), 7100)
	eq("rocketmq_messages_in_total", in("MB"), 5)
	eq("rocketmq_throughput_in_total", in("MB"), 36)
	if got := rpc("send_message", "system_error"); got != 1 {
		t.Errorf("refused send: rpc_latency count %d, want 1", got)
	}
	h := series(fams, "rocketmq_message_size", in("MA"))
	if len(h) != 1 || h[0].Histogram == nil {
		t.Fatalf("message_size{MA}: %s", dump(fams["rocketmq_message_size"]))
	}
	if hist := h[0].Histogram; hist.GetSampleCount() != 3 || hist.GetSampleSum() != 7100 {
		t.Errorf("message_size{MA} count %d sum %v, want 3 and 7100", hist.GetSampleCount(), hist.GetSampleSum())
	} else {
		want := map[float64]uint64{1024: 1, 4096: 2, 512 << 10: 3}
		for _, bk := range hist.Bucket {
			if w, ok := want[bk.GetUpperBound()]; ok && bk.GetCumulativeCount() != w {
				t.Errorf("message_size{MA} bucket le=%v: %d, want %d", bk.GetUpperBound(), bk.GetCumulativeCount(), w)
			}
		}
	}

	out := with("topic", "MA", "consumer_group", "cg", "is_retry", "false", "is_system", "false")
	eq("rocketmq_messages_out_total", out, 2)
	eq("rocketmq_throughput_out_total", out, float64(len(pull.Body)))

	lag := with("consumer_group", "cg", "topic", "MA", "is_retry", "false", "is_system", "false")
	eq("rocketmq_consumer_lag_messages", lag, 2)      // 3 stored, 1 committed
	eq("rocketmq_consumer_inflight_messages", lag, 1) // 2 pulled, 1 committed
	eq("rocketmq_consumer_lag_latency", lag, 10000)   // the oldest unconsumed is 10 s old
	eq("rocketmq_send_to_dlq_messages_total", with("consumer_group", "cg", "is_system", "false"), 1)

	eq("rocketmq_topic_number", node, topicsBefore+4) // MA, MB, %RETRY%cg, %DLQ%cg
	eq("rocketmq_consumer_group_number", node, 1)
	probe := protocol.NewRequest(0, nil, nil)
	lang, version := strings.ToLower(probe.Language), strings.ToLower(protocol.VersionName(int(probe.Version)))
	eq("rocketmq_producer_connections", with("language", lang, "version", version, "protocol_type", "remoting"), 1)
	eq("rocketmq_consumer_connections", with("consumer_group", "cg", "language", lang, "version", version,
		"consume_mode", "push", "protocol_type", "remoting", "is_system", "false"), 1)
	if got := value(t, fams, "rocketmq_storage_size", with("storage_type", "local", "storage_medium", "disk")); got <= 0 {
		t.Errorf("storage_size %v, want > 0", got)
	}

	for _, c := range []struct {
		req, resp string
		n         uint64
	}{
		{"send_message", "success", 3}, {"send_message_v2", "success", 2}, {"send_batch_message", "success", 1},
		{"pull_message", "success", 1}, {"update_consumer_offset", "success", 1}, {"heart_beat", "success", 1},
		{"consumer_send_msg_back", "success", 1}, {"update_and_create_topic", "success", 2},
	} {
		if got := rpc(c.req, c.resp); got != c.n {
			t.Errorf("rpc_latency{%s,%s} count %d, want %d\n%s", c.req, c.resp, got, c.n, dump(fams["rocketmq_rpc_latency"]))
		}
	}
	if got := len(series(fams, "rocketmq_rpc_latency", with("request_code", "send_message", "response_code", "success"))); got != 1 {
		t.Errorf("send_message/success spread over %d series", got)
	}
}

// TestCardinalityBound: past TopicLimit topics and GroupLimit groups,
// traffic is counted under "_other", every message still counted once.
func TestCardinalityBound(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.Metrics.TopicLimit, c.Metrics.GroupLimit = 2, 1 })
	rc := newRawClient(t, b.Addr())
	topics := []string{"C0", "C1", "C2", "C3", "C4"}
	for i, topic := range topics {
		rc.createTopic(topic, 1)
		for range i + 1 {
			rc.ok(protocol.ReqSendMessage, sendHeader(topic, nil).Encode(), []byte("x"))
		}
	}
	for _, g := range []string{"g0", "g1", "g2"} {
		rc.heartbeat(protocol.HeartbeatData{ClientID: "card@" + g, ConsumerDataSet: []protocol.ConsumerData{{
			GroupName: g, ConsumeType: protocol.ConsumeActively, MessageModel: protocol.MessageModelClustering,
			ConsumeFromWhere:    protocol.ConsumeFromFirstOffset,
			SubscriptionDataSet: []protocol.SubscriptionData{protocol.BuildSubscriptionData("C0", "*")},
		}}})
		rc.ok(protocol.ReqPullMessage, pullHeader(g, "C0", 0, 32), nil)
	}
	fams := scrape(t, b.MetricsURL())

	seen := map[string]float64{}
	for _, m := range series(fams, "rocketmq_messages_in_total", nil) {
		seen[labelsOf(m)["topic"]] += m.Counter.GetValue()
	}
	want := map[string]float64{"C0": 1, "C1": 2, metrics.Other: 3 + 4 + 5}
	if len(seen) != len(want) {
		t.Fatalf("messages_in topics %v, want %v", seen, want)
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("messages_in{topic=%s} = %v, want %v (all: %v)", k, seen[k], v, seen)
		}
	}
	groups := map[string]float64{}
	for _, m := range series(fams, "rocketmq_messages_out_total", map[string]string{"topic": "C0"}) {
		groups[labelsOf(m)["consumer_group"]] += m.Counter.GetValue()
	}
	if len(groups) != 2 || groups["g0"] != 1 || groups[metrics.Other] != 2 {
		t.Errorf("messages_out{topic=C0} by group %v, want g0:1 _other:2", groups)
	}
	conns := map[string]float64{}
	for _, m := range series(fams, "rocketmq_consumer_connections", nil) {
		conns[labelsOf(m)["consumer_group"]] += m.Gauge.GetValue()
	}
	if len(conns) != 2 || conns["g0"] != 1 || conns[metrics.Other] != 2 {
		t.Errorf("consumer_connections by group %v, want g0:1 _other:2", conns)
	}
}

// TestOffUnlessProm: without metricsExporterType=PROM nothing is served;
// with it the server stops with the broker.
func TestOffUnlessProm(t *testing.T) {
	for _, typ := range []string{"", metrics.ExporterDisable, metrics.ExporterLog} {
		b := startBroker(t, func(c *config.Config) { c.Metrics.ExporterType = typ })
		if u := b.MetricsURL(); u != "" {
			t.Errorf("exporter type %q: metrics served at %s", typ, u)
		}
	}

	b := startBroker(t, nil)
	url := b.MetricsURL()
	scrape(t, url)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	if resp, err := cl.Get(url); err == nil {
		resp.Body.Close()
		t.Fatalf("GET %s after Close: %s", url, resp.Status)
	}
}

// TestBrokerConfKeys: RocketMQ's keys turn the exporter on and place it.
func TestBrokerConfKeys(t *testing.T) {
	cfg := config.Default()
	if cfg.Metrics.Enabled() || cfg.Metrics.PromPort != 5557 {
		t.Fatalf("default metrics config %+v, want off on port 5557", cfg.Metrics)
	}
	ignored, err := cfg.ApplyProperties(strings.NewReader(
		"metricsExporterType=PROM\nmetricsPromExporterHost=127.0.0.1\nmetricsPromExporterPort=15557\nmetricsTopicLimit=7\n"))
	if err != nil || len(ignored) != 0 {
		t.Fatalf("ApplyProperties: %v, ignored %v", err, ignored)
	}
	m := cfg.Metrics
	if !m.Enabled() || m.Addr() != "127.0.0.1:15557" || m.TopicLimit != 7 {
		t.Fatalf("metrics config %+v", m)
	}
	for _, bad := range []string{"metricsExporterType=PROMETHEUS", "metricsPromExporterPort=70000", "metricsTopicLimit=x"} {
		if _, err := cfg.ApplyProperties(strings.NewReader(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestPortTaken: a metrics port in use fails Start with an error that
// says so, and the broker closes cleanly.
func TestPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := config.Default()
	cfg.ListenAddr, cfg.StoreDir, cfg.Logger = "127.0.0.1:0", t.TempDir(), testLogger()
	if err := cfg.Metrics.SetAddr(ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Start()
	if err == nil || !strings.Contains(err.Error(), "metrics") {
		t.Errorf("Start with the metrics port taken: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
