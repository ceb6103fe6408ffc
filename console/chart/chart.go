// Package chart draws the console's charts as SVG on the server: line
// charts of the sampled series (rates, lag) over the last minutes, and a
// message's trace as a timeline. No script and no external asset is
// needed to show them; colours come from the page's style sheet (classes
// s0..s5), so a chart follows the page's theme.
//
// Every text a chart shows (series names, labels) is escaped: a topic
// named with markup is drawn as text.
package chart

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/runnelmq/runnel/console/sampler"
)

// Line is one series of a line chart.
type Line struct {
	Name   string
	Points []sampler.Point
}

// Options shape a line chart. Zero fields take defaults.
type Options struct {
	Title string
	// Unit follows the values in the legend ("msg/s"). Default none.
	Unit string
	// Width and Height are the drawing's size in pixels. Default 640 x 180.
	Width, Height int
	// Now and Window are the time axis: it ends at Now and spans Window.
	// Default: the newest point, and the span of the points.
	Now    time.Time
	Window time.Duration
	// Empty is shown when no line has a point. Default "no samples yet".
	Empty string
}

const (
	left, right, top, bottom = 52, 12, 28, 22
	palette                  = 6
	minSpan                  = time.Minute
)

// Lines draws lines on one chart.
func Lines(o Options, lines ...Line) template.HTML {
	if o.Width == 0 {
		o.Width = 640
	}
	if o.Height == 0 {
		o.Height = 180
	}
	if o.Empty == "" {
		o.Empty = "no samples yet"
	}
	var lo, hi time.Time
	maxV := 0.0
	n := 0
	for _, l := range lines {
		for _, p := range l.Points {
			if n == 0 || p.T.Before(lo) {
				lo = p.T
			}
			if n == 0 || p.T.After(hi) {
				hi = p.T
			}
			maxV = math.Max(maxV, p.V)
			n++
		}
	}
	if !o.Now.IsZero() {
		hi = o.Now
	}
	// The axis spans the window, or less while the samples do not fill
	// it yet (a minute at least): a chart a minute old is not a sliver
	// at the right edge of ten empty minutes.
	if o.Window > 0 && (n == 0 || lo.Before(hi.Add(-o.Window))) {
		lo = hi.Add(-o.Window)
	} else if o.Window > 0 && hi.Sub(lo) < minSpan {
		lo = hi.Add(-min(minSpan, o.Window))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		o.Width, o.Height, o.Width, o.Height)
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(o.Title))
	fmt.Fprintf(&b, `<text class="ctitle" x="%d" y="16">%s</text>`, left, html.EscapeString(o.Title))
	pw, ph := float64(o.Width-left-right), float64(o.Height-top-bottom)
	fmt.Fprintf(&b, `<rect class="plot" x="%d" y="%d" width="%.0f" height="%.0f"/>`, left, top, pw, ph)
	if n == 0 || !hi.After(lo) {
		fmt.Fprintf(&b, `<text class="empty" x="%.0f" y="%.0f" text-anchor="middle">%s</text></svg>`,
			float64(left)+pw/2, float64(top)+ph/2+4, html.EscapeString(o.Empty))
		return template.HTML(b.String())
	}
	yMax := niceCeil(maxV)
	ticks := 4 // 1, 2 and 10 split in quarters; 5 in fifths, for round labels
	if lead := yMax / math.Pow(10, math.Floor(math.Log10(yMax))); lead == 5 {
		ticks = 5
	}
	for i := 0; i <= ticks; i++ {
		v := yMax * float64(i) / float64(ticks)
		y := float64(top) + ph - ph*float64(i)/float64(ticks)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%.0f" y1="%.1f" y2="%.1f"/>`, left, float64(left)+pw, y, y)
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, y+4, Number(v))
	}
	span := hi.Sub(lo)
	for i := 0; i <= 4; i++ {
		x := float64(left) + pw*float64(i)/4
		ago := span - span*time.Duration(i)/4
		label := "now"
		if ago > 0 {
			label = "-" + shortDuration(ago)
		}
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">%s</text>`, x, o.Height-6, label)
	}
	xOf := func(t time.Time) float64 { return float64(left) + pw*float64(t.Sub(lo))/float64(span) }
	yOf := func(v float64) float64 { return float64(top) + ph - ph*v/yMax }
	// The legend sits at the top right, laid out from the right edge.
	type key struct{ cls, label string }
	var keys []key
	for i, l := range lines {
		cls := fmt.Sprintf("s%d", i%palette)
		var pts []string
		for _, p := range l.Points {
			if p.T.Before(lo) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(p.T), yOf(p.V)))
		}
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle class="%s" cx="%s" r="2.5"/>`, cls, strings.Replace(pts[0], ",", `" cy="`, 1))
		} else if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline class="line %s" points="%s"/>`, cls, strings.Join(pts, " "))
		}
		last := "–"
		if k := len(l.Points); k > 0 {
			last = Number(l.Points[k-1].V)
			if o.Unit != "" {
				last += " " + o.Unit
			}
		}
		keys = append(keys, key{cls, l.Name + " " + last})
	}
	x := float64(o.Width - right)
	for i := len(keys) - 1; i >= 0; i-- {
		x -= 6.2 * float64(len([]rune(keys[i].label)))
		fmt.Fprintf(&b, `<rect class="key %s" x="%.0f" y="8" width="10" height="10"/><text class="legend" x="%.0f" y="17">%s</text>`,
			keys[i].cls, x-14, x, html.EscapeString(keys[i].label))
		x -= 26
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// Number formats v short: 0, 3.5, 120, 12.3k, 4.1M.
func Number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trim(fmt.Sprintf("%.1f", v/1e9)) + "G"
	case a >= 1e6:
		return trim(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trim(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || a == math.Trunc(a):
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return trim(fmt.Sprintf("%.1f", v))
	default:
		return trim(fmt.Sprintf("%.2f", v))
	}
}

func trim(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func shortDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return trim(fmt.Sprintf("%.1f", d.Hours())) + "h"
	case d >= time.Minute:
		return trim(fmt.Sprintf("%.1f", d.Minutes())) + "m"
	default:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
}
