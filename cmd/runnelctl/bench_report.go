package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/schollz/progressbar/v3"
)

// benchReport is what a bench command prints; a side it did not run is
// left out.
type benchReport struct {
	Produce *phaseReport `json:"produce,omitempty"`
	Consume *phaseReport `json:"consume,omitempty"`
}

// phaseReport is one side of a run. Bytes count bodies only; MB is 10^6
// bytes.
type phaseReport struct {
	Topic   string `json:"topic"`
	Group   string `json:"group"`
	Clients int    `json:"clients"`
	// Batch and Async describe the sends (produce only).
	Batch      int           `json:"batch,omitempty"`
	Async      bool          `json:"async,omitempty"`
	Msgs       int64         `json:"msgs"`
	Bytes      int64         `json:"bytes"`
	Seconds    float64       `json:"seconds"`
	MsgsPerSec float64       `json:"msgsPerSec"`
	MBPerSec   float64       `json:"mbPerSec"`
	Latency    latencyReport `json:"latency"`
}

// latencyReport summarises an HDR histogram in microseconds.
type latencyReport struct {
	// Of is what was timed: "send" (each send call) or "end-to-end" (birth
	// to delivery).
	Of    string  `json:"of"`
	Count int64   `json:"count"`
	Mean  float64 `json:"meanUs"`
	P50   int64   `json:"p50Us"`
	P90   int64   `json:"p90Us"`
	P99   int64   `json:"p99Us"`
	P999  int64   `json:"p99_9Us"`
	Max   int64   `json:"maxUs"`
}

func newPhaseReport(of string, f benchFlags, clients int, msgs, bytes int64, elapsed time.Duration, h *hdrhistogram.Histogram) *phaseReport {
	p := &phaseReport{Topic: f.topic, Group: f.group, Clients: clients, Msgs: msgs, Bytes: bytes, Seconds: elapsed.Seconds(),
		Latency: latencyReport{Of: of, Count: h.TotalCount(), Mean: h.Mean(),
			P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
			P999: h.ValueAtQuantile(99.9), Max: h.Max()}}
	if of == "send" {
		p.Batch, p.Async = f.batch, f.async
	}
	if s := elapsed.Seconds(); s > 0 {
		p.MsgsPerSec = float64(msgs) / s
		p.MBPerSec = float64(bytes) / 1e6 / s
	}
	return p
}

func (r benchReport) writeText(w io.Writer) error {
	if p := r.Produce; p != nil {
		mode := "sync"
		if p.Async {
			mode = "async"
		}
		fmt.Fprintf(w, "produce  %s: producers %d, batch %d, %s\n", p.Topic, p.Clients, p.Batch, mode)
		p.writeText(w)
	}
	if p := r.Consume; p != nil {
		fmt.Fprintf(w, "consume  %s: consumers %d, group %s\n", p.Topic, p.Clients, p.Group)
		p.writeText(w)
	}
	return nil
}

func (p *phaseReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "  %d msgs, %d bytes in %.3fs: %.0f msg/s, %.2f MB/s\n", p.Msgs, p.Bytes, p.Seconds, p.MsgsPerSec, p.MBPerSec)
	l := p.Latency
	fmt.Fprintf(w, "  %s latency: p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		l.Of, micros(l.P50), micros(l.P90), micros(l.P99), micros(l.P999), micros(l.Max))
}

// micros renders a microsecond figure with three significant digits.
func micros(us int64) string {
	d := time.Duration(us) * time.Microsecond
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", us)
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(us)/1e3)
	default:
		return fmt.Sprintf("%.3gs", float64(us)/1e6)
	}
}

// benchBar draws a progress bar of a counter while a run goes on. A bar
// that is off (not a terminal) draws nothing.
type benchBar struct {
	bar      *progressbar.ProgressBar
	done     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// startBenchBar draws count against total (a spinner when total is 0) on w
// every 100 ms, when on is true.
func startBenchBar(w io.Writer, on bool, label string, total int64, count *atomic.Int64) *benchBar {
	b := &benchBar{done: make(chan struct{})}
	if !on {
		return b
	}
	if total <= 0 {
		total = -1
	}
	b.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionSetItsString("msg"),
		progressbar.OptionShowIts(),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
	)
	b.wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-tick.C:
				_ = b.bar.Set64(count.Load())
			}
		}
	})
	return b
}

// stop ends the bar and clears its line, so the report starts clean.
func (b *benchBar) stop() {
	b.stopOnce.Do(func() {
		close(b.done)
		b.wg.Wait()
		if b.bar != nil {
			_ = b.bar.Clear()
		}
	})
}
