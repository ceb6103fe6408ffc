// Package promtest reads a Prometheus /metrics exposition for tests: the
// broker's, the name server's and a replicated group's metrics tests
// scrape and pick series the same way, through this one reader.
package promtest

import (
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape GETs url and parses the text exposition into its families by name.
func Scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return fams, nil
}

// Series returns the series of family name whose labels include every
// pair of want (all of them for an empty want; none for an absent family).
func Series(fams map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	var out []*dto.Metric
next:
	for _, m := range f.Metric {
		got := Labels(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// Labels returns a series' labels as a map.
func Labels(m *dto.Metric) map[string]string {
	got := make(map[string]string, len(m.Label))
	for _, l := range m.Label {
		got[l.GetName()] = l.GetValue()
	}
	return got
}

// Value is a counter's, gauge's or untyped series' value, and false for
// any other kind (a histogram or summary has no one value).
func Value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}
