package namesrv

import (
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/runnelmq/runnel/internal/promtest"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func scrapeNamesrv(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := promtest.Scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// metricValue is the value of the one series of name whose labels include
// want, and how many such series there are.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, int) {
	ms := promtest.Series(fams, name, want)
	if len(ms) == 0 {
		return 0, 0
	}
	v, _ := promtest.Value(ms[len(ms)-1])
	return v, len(ms)
}

// TestMetricsExport: with metricsExporterType=PROM the name server serves
// its brokers, topics and requests by code at /metrics, and stops serving
// when it closes; without it, nothing is served.
func TestMetricsExport(t *testing.T) {
	if e := start(t, nil); e.srv.MetricsURL() != "" {
		t.Fatalf("metrics served while off: %s", e.srv.MetricsURL())
	}
	e := start(t, func(c *Config) { c.Metrics = MetricsConfig{ExporterType: "PROM", PromHost: "127.0.0.1"} })
	c := newClient(t, nil)
	e.register(t, c, broker{cluster: "c1", name: "b", addr: "10.0.0.1:10911", version: 1, topics: map[string]int{"T": 4, "U": 2}})
	e.register(t, c, broker{cluster: "c2", name: "d", addr: "10.0.0.3:10911", version: 1, topics: map[string]int{"T": 4}})
	e.route(t, c, "T")
	e.route(t, c, "T")
	e.route(t, c, "NOPE")

	fams := scrapeNamesrv(t, e.srv.MetricsURL())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"rocketmq_namesrv_brokers", map[string]string{"cluster": "c1", "node_type": "namesrv"}, 1},
		{"rocketmq_namesrv_brokers", map[string]string{"cluster": "c2"}, 1},
		{"rocketmq_namesrv_topics", nil, 2},
		{"rocketmq_namesrv_requests_total", map[string]string{"request_code": "register_broker", "response_code": "success"}, 2},
		{"rocketmq_namesrv_requests_total", map[string]string{"request_code": "get_routeinfo_by_topic", "response_code": "success"}, 2},
		{"rocketmq_namesrv_requests_total", map[string]string{"request_code": "get_routeinfo_by_topic", "response_code": "topic_not_exist"}, 1},
	} {
		if got, n := metricValue(fams, c.name, c.labels); n != 1 || got != c.want {
			t.Errorf("%s%v = %v (%d series), want %v", c.name, c.labels, got, n, c.want)
		}
	}
	// A made-up request code lands under "unknown".
	call(t, c, e.addr, protocol.NewRequest(31999, nil, nil))
	fams = scrapeNamesrv(t, e.srv.MetricsURL())
	if got, n := metricValue(fams, "rocketmq_namesrv_requests_total", map[string]string{"request_code": "unknown"}); n != 1 || got != 1 {
		t.Errorf("unknown code counted %v in %d series", got, n)
	}

	url := e.srv.MetricsURL()
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	if resp, err := cl.Get(url); err == nil {
		resp.Body.Close()
		t.Fatalf("metrics still served after Close")
	}
}
