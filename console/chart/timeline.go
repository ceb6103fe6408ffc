package chart

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

// Span is one step of a timeline: a send, a delivery, a consume.
type Span struct {
	Label string
	Start time.Time
	Cost  time.Duration
	// Failed marks a step that did not succeed.
	Failed bool
	// Detail is shown beside the bar (who, where).
	Detail string
}

// Timeline draws spans as bars on one time axis, one row each, in the
// order given.
func Timeline(spans []Span) template.HTML {
	if len(spans) == 0 {
		return ""
	}
	lo, hi := spans[0].Start, spans[0].Start.Add(spans[0].Cost)
	for _, s := range spans {
		if s.Start.Before(lo) {
			lo = s.Start
		}
		if end := s.Start.Add(s.Cost); end.After(hi) {
			hi = end
		}
	}
	span := hi.Sub(lo)
	if span <= 0 {
		span = time.Millisecond
	}
	const width, labelW, detailW, row = 760, 120, 260, 26
	plotW := float64(width - labelW - detailW - 20)
	height := 24 + row*len(spans)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart timeline" role="img" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg"><title>trace timeline</title>`,
		width, height, width, height)
	fmt.Fprintf(&b, `<text class="axis" x="%d" y="14">0 ms</text><text class="axis" x="%.0f" y="14" text-anchor="end">%s</text>`,
		labelW, float64(labelW)+plotW, html.EscapeString(fmt.Sprintf("%d ms", span.Milliseconds())))
	for i, s := range spans {
		y := 22 + i*row
		x := float64(labelW) + plotW*float64(s.Start.Sub(lo))/float64(span)
		w := max(plotW*float64(s.Cost)/float64(span), 3)
		cls := "ok"
		if s.Failed {
			cls = "failed"
		}
		fmt.Fprintf(&b, `<text class="legend" x="0" y="%d">%s</text>`, y+14, html.EscapeString(s.Label))
		fmt.Fprintf(&b, `<rect class="bar %s" x="%.1f" y="%d" width="%.1f" height="16" rx="2"/>`, cls, x, y+2, w)
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d">%s</text>`, width-detailW, y+14,
			html.EscapeString(fmt.Sprintf("+%d ms, %d ms  %s", s.Start.Sub(lo).Milliseconds(), s.Cost.Milliseconds(), s.Detail)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
