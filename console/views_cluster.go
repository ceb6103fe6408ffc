package console

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/runnelmq/runnel/console/chart"
	"github.com/runnelmq/runnel/console/sampler"
)

// queryOf builds "?k=v&..." from pairs, leaving out empty values.
func queryOf(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	return "?" + v.Encode()
}

// rateOf is the newest rate of a counter series, -1 when there is none.
func (c *Console) rateOf(key string) float64 {
	if p, ok := c.store.Last(key); ok {
		return p.V
	}
	return -1
}

// lines are the named series of one chart.
func (c *Console) chart(title, unit string, named ...string) template.HTML {
	var ls []chart.Line
	for i := 0; i+1 < len(named); i += 2 {
		ls = append(ls, chart.Line{Name: named[i], Points: c.store.Points(named[i+1])})
	}
	return chart.Lines(chart.Options{Title: title, Unit: unit, Now: c.cfg.Now(), Window: c.cfg.History,
		Empty: "collecting samples (one every " + c.cfg.SampleInterval.String() + ")"}, ls...)
}

type nsRow struct {
	Addr    string   `json:"addr"`
	Brokers int      `json:"brokers"`
	Error   *errView `json:"error,omitempty"`
}

type brokerRow struct {
	brokerView
	In    float64  `json:"inPerSecond"`  // -1 unknown
	Out   float64  `json:"outPerSecond"` // -1 unknown
	Error *errView `json:"error,omitempty"`
}

type clusterModel struct {
	At       time.Time                  `json:"at"`
	Error    *errView                   `json:"error,omitempty"`
	Namesrvs []nsRow                    `json:"namesrvs"`
	Brokers  []brokerRow                `json:"brokers"`
	Topics   int                        `json:"topics"`
	Groups   int                        `json:"groups"`
	In       float64                    `json:"inPerSecond"`
	Out      float64                    `json:"outPerSecond"`
	Chart    template.HTML              `json:"-"`
	Series   map[string][]sampler.Point `json:"series"`
}

func (c *Console) clusterView(_ context.Context, _ *http.Request) (string, any, error) {
	s := c.snap.Load()
	m := clusterModel{At: s.At, Error: describe(s.Err), In: c.rateOf(keyClusterIn), Out: c.rateOf(keyClusterOut),
		Series: map[string][]sampler.Point{keyClusterIn: c.store.Points(keyClusterIn), keyClusterOut: c.store.Points(keyClusterOut)}}
	for _, ns := range s.Namesrvs {
		m.Namesrvs = append(m.Namesrvs, nsRow{Addr: ns.Addr, Brokers: ns.Brokers, Error: describe(ns.Err)})
	}
	for _, b := range s.Brokers {
		row := brokerRow{brokerView: b, In: -1, Out: -1, Error: describe(b.Err)}
		if b.Role == "MASTER" {
			row.In, row.Out = c.rateOf(keyBrokerIn(b.Name)), c.rateOf(keyBrokerOut(b.Name))
		}
		m.Brokers = append(m.Brokers, row)
	}
	for _, t := range s.Topics {
		if !t.System {
			m.Topics++
		}
	}
	for _, g := range s.Groups {
		if !g.System {
			m.Groups++
		}
	}
	m.Chart = c.chart("Messages per second, whole cluster", "msg/s", "in", keyClusterIn, "out", keyClusterOut)
	return "Cluster", m, nil
}

// seriesView is the API's raw series: /api/series?key=topic.in/orders.
func (c *Console) seriesView(_ context.Context, r *http.Request) (string, any, error) {
	key := r.URL.Query().Get("key")
	if key == "" {
		keys := c.store.Keys()
		if keys == nil {
			keys = []string{}
		}
		return "", map[string]any{"keys": keys}, nil
	}
	pts := c.store.Points(key)
	if pts == nil {
		pts = []sampler.Point{}
	}
	return "", map[string]any{"key": key, "points": pts}, nil
}
