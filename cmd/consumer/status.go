package main

import (
	"context"
	"fmt"
	"time"

	"github.com/runnelmq/runnel/client/queue"
)

// statusInterval is how often the live status line is refreshed.
const statusInterval = time.Second

// offsetSource answers the offset questions the status line needs;
// *client.PullConsumer is one.
type offsetSource interface {
	MaxOffset(ctx context.Context, mq queue.MessageQueue) (int64, error)
	CommittedOffset(ctx context.Context, mq queue.MessageQueue) (int64, error)
}

// statusLine shows throughput and lag on a terminal's stderr.
type statusLine struct {
	out      *output
	group    string
	assigned func() []queue.MessageQueue // the consumer's queues now
	offsets  offsetSource
	now      func() time.Time

	// The rate is measured from here; set by newStatusLine, then owned by
	// run.
	last  time.Time
	lastN int
}

func newStatusLine(out *output, group string, assigned func() []queue.MessageQueue, offsets offsetSource, now func() time.Time) *statusLine {
	return &statusLine{out: out, group: group, assigned: assigned, offsets: offsets, now: now, last: now(), lastN: out.count()}
}

// run refreshes the line at every tick until ctx ends, then erases it.
func (s *statusLine) run(ctx context.Context, tick <-chan time.Time) {
	defer s.out.clearStatus()
	last, lastN := s.last, s.lastN
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		now, n := s.now(), s.out.count()
		var rate float64
		if el := now.Sub(last).Seconds(); el > 0 {
			rate = float64(n-lastN) / el
		}
		last, lastN = now, n
		lag, ok := s.lag(ctx)
		if ctx.Err() != nil {
			return
		}
		s.out.showStatus(formatStatus(s.group, n, rate, lag, ok))
	}
}

// lag is the number of messages in the consumer's queues that it has not
// printed yet: each queue's max offset less one past its last printed
// message, or less the group's committed offset for a queue that printed
// nothing yet. Tag-filtered messages count until the consumer moves past
// them, so the figure is an upper bound.
func (s *statusLine) lag(ctx context.Context) (int64, bool) {
	ctx, cancel := context.WithTimeout(ctx, statusInterval)
	defer cancel()
	var total int64
	for _, mq := range s.assigned() {
		maxOff, err := s.offsets.MaxOffset(ctx, mq)
		if err != nil {
			return 0, false
		}
		next, ok := s.out.nextOffset(mq)
		if !ok {
			next, err = s.offsets.CommittedOffset(ctx, mq)
			if err != nil {
				return 0, false
			}
			next = max(next, 0)
		}
		total += max(0, maxOff-next)
	}
	return total, true
}

func formatStatus(group string, n int, rate float64, lag int64, lagKnown bool) string {
	lagText := "?"
	if lagKnown {
		lagText = fmt.Sprint(lag)
	}
	return fmt.Sprintf("[%s] %d messages, %.1f msg/s, lag %s", group, n, rate, lagText)
}
