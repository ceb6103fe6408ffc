package chart

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/console/sampler"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wellFormed fails unless svg parses as XML.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
	}
}

func TestLinesDrawsEveryLineAndEscapesNames(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 10, 0, 0, time.UTC)
	var pts []sampler.Point
	for i := range 10 {
		pts = append(pts, sampler.Point{T: now.Add(-time.Duration(9-i) * 10 * time.Second), V: float64(i * 3)})
	}
	svg := string(Lines(Options{Title: "in <b>", Unit: "msg/s", Now: now, Window: 2 * time.Minute},
		Line{Name: `<script>alert(1)</script>`, Points: pts}, Line{Name: "out", Points: pts[:1]}))
	wellFormed(t, svg)
	if strings.Contains(svg, "<script>") || !strings.Contains(svg, "&lt;script&gt;") || strings.Contains(svg, "<b>") {
		t.Fatalf("names not escaped: %s", svg)
	}
	if strings.Count(svg, "<polyline") != 1 || strings.Count(svg, "<circle") != 1 {
		t.Fatalf("want one polyline and one dot: %s", svg)
	}
	if !strings.Contains(svg, "27 msg/s") || !strings.Contains(svg, "-1.5m") || !strings.Contains(svg, ">now<") {
		t.Fatalf("legend or axis missing: %s", svg)
	}
}

func TestLinesWithoutPointsSaysSo(t *testing.T) {
	svg := string(Lines(Options{Title: "lag", Empty: "waiting for the first samples"}))
	wellFormed(t, svg)
	if !strings.Contains(svg, "waiting for the first samples") {
		t.Fatal(svg)
	}
}

func TestNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 3.5: "3.5", 0.25: "0.25", 120: "120", 12345: "12.3k", 4.1e6: "4.1M", 2e9: "2G", 7: "7"} {
		if got := Number(v); got != want {
			t.Errorf("Number(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTimelineOrdersBarsOnOneAxis(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	svg := string(Timeline([]Span{
		{Label: "sent", Start: t0, Cost: 5 * time.Millisecond, Detail: "pg <x>"},
		{Label: "consumed", Start: t0.Add(20 * time.Millisecond), Cost: 30 * time.Millisecond, Failed: true},
	}))
	wellFormed(t, svg)
	if strings.Count(svg, `class="bar`) != 2 || !strings.Contains(svg, "50 ms") || !strings.Contains(svg, "pg &lt;x&gt;") || !strings.Contains(svg, "bar failed") {
		t.Fatal(svg)
	}
	if Timeline(nil) != "" {
		t.Fatal("a timeline of nothing")
	}
}

func TestAxisLabelsAreRound(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for max, want := range map[float64][]string{4.2: {">1<", ">2<", ">3<", ">4<", ">5<"}, 17: {">5<", ">10<", ">15<", ">20<"}, 0.3: {">0.25<", ">0.5<", ">0.75<", ">1<"}} {
		svg := string(Lines(Options{Now: now, Window: time.Minute}, Line{Name: "x", Points: []sampler.Point{{T: now.Add(-time.Second), V: max}}}))
		for _, w := range want {
			if !strings.Contains(svg, w) {
				t.Errorf("max %v: no label %s in %s", max, w, svg)
			}
		}
	}
}
