package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/metrics"
	"github.com/runnelmq/runnel/internal/promtest"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

func testLogger() *slog.Logger {
	if os.Getenv("RUNNEL_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startBroker starts a broker on a fresh store with /metrics on a free
// loopback port (unless mod turns it off).
func startBroker(t testing.TB, mod func(*config.Config)) *broker.Broker {
	t.Helper()
	cfg := config.Default()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.StoreDir = t.TempDir()
	cfg.Logger = testLogger()
	cfg.StoreOptions = func(o *store.Options) {
		o.CacheSize = 8 << 20
		o.MemTableSize = 4 << 20
	}
	cfg.Metrics = metrics.Config{ExporterType: metrics.ExporterProm, PromHost: "127.0.0.1", PromPort: 0}
	if mod != nil {
		mod(&cfg)
	}
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := b.Start(); err != nil {
		_ = b.Close()
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

type rawClient struct {
	t    testing.TB
	cl   *remoting.Client
	addr string
}

func newRawClient(t testing.TB, addr string) *rawClient {
	rc := &rawClient{t: t, addr: addr, cl: remoting.NewClient(remoting.ClientConfig{Logger: testLogger()})}
	t.Cleanup(func() { _ = rc.cl.Close() })
	return rc
}

func (rc *rawClient) call(code int16, ext map[string]string, body []byte) *protocol.Command {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := rc.cl.Invoke(ctx, rc.addr, protocol.NewRequest(code, ext, body))
	if err != nil {
		rc.t.Fatalf("call %s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

func (rc *rawClient) ok(code int16, ext map[string]string, body []byte) *protocol.Command {
	rc.t.Helper()
	resp := rc.call(code, ext, body)
	if resp.Code != protocol.RespSuccess {
		rc.t.Fatalf("%s answered %s %q", protocol.RequestCodeName(code), protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return resp
}

func (rc *rawClient) createTopic(topic string, queues int32) {
	rc.t.Helper()
	rc.ok(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: "defaultTopic", ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6,
		TopicFilterType: protocol.TopicFilterSingleTag,
	}.Encode(), nil)
}

func sendHeader(topic string, props map[string]string) protocol.SendMessageRequestHeader {
	return protocol.SendMessageRequestHeader{
		ProducerGroup: "pg", Topic: topic, DefaultTopic: protocol.DefaultTopicKey, DefaultTopicQueueNums: 4,
		QueueID: 0, BornTimestamp: time.Now().UnixMilli(), Properties: message.MarshalProperties(props),
	}
}

func (rc *rawClient) heartbeat(hb protocol.HeartbeatData) {
	rc.t.Helper()
	body, err := hb.Encode()
	if err != nil {
		rc.t.Fatal(err)
	}
	rc.ok(protocol.ReqHeartBeat, nil, body)
}

func pullHeader(group, topic string, offset int64, max int32) map[string]string {
	return protocol.PullMessageRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: 0, QueueOffset: offset, MaxMsgNums: max,
		SuspendTimeoutMillis: 20000, ExpressionType: protocol.ExpressionTypeTag,
	}.Encode()
}

// scrape GETs url and parses the exposition.
func scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := promtest.Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	return promtest.Series(fams, name, want)
}

func labelsOf(m *dto.Metric) map[string]string { return promtest.Labels(m) }

// value is the one series of name with labels want: a counter's or a
// gauge's value.
func value(t testing.TB, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	ms := series(fams, name, want)
	if len(ms) != 1 {
		t.Fatalf("%s%v: %d series, want 1; family:\n%s", name, want, len(ms), dump(fams[name]))
	}
	if v, ok := promtest.Value(ms[0]); ok {
		return v
	}
	t.Fatalf("%s%v is neither counter nor gauge", name, want)
	return 0
}

func dump(f *dto.MetricFamily) string {
	if f == nil {
		return "(absent)"
	}
	var lines []string
	for _, m := range f.Metric {
		lines = append(lines, fmt.Sprint(labelsOf(m), " ", m.String()))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
