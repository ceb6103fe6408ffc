package processqueue

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// MiB is the unit of the size thresholds.
const MiB = 1 << 20

// FlowConfig holds the push consumer's flow-control thresholds, with
// RocketMQ's names and defaults.
type FlowConfig struct {
	// PullThresholdForQueue: stop pulling a queue holding more than this
	// many messages. Default: 1000.
	PullThresholdForQueue int64
	// PullThresholdSizeForQueue: stop pulling a queue holding more than this
	// many MiB of message bodies (compared in whole MiB, as Java does).
	// Default: 100.
	PullThresholdSizeForQueue int64
	// PullThresholdForTopic, when not -1, replaces PullThresholdForQueue by
	// itself divided by the number of queues the consumer holds (at least
	// 1). Default: -1 (unset).
	PullThresholdForTopic int64
	// PullThresholdSizeForTopic, when not -1, replaces
	// PullThresholdSizeForQueue the same way, in MiB. Default: -1 (unset).
	PullThresholdSizeForTopic int64
	// ConsumeConcurrentlyMaxSpan: concurrent consumption stops pulling a
	// queue whose held offsets span more than this. Default: 2000.
	ConsumeConcurrentlyMaxSpan int64
	// FlowControlDelay is how long to wait before retrying a pull stopped by
	// a threshold. Default: 50 ms.
	FlowControlDelay time.Duration
	// NotLockedDelay is how long an orderly consumer waits before retrying a
	// pull on a queue it has not locked at the broker. Default: 3 s.
	NotLockedDelay time.Duration
}

// DefaultFlowConfig returns RocketMQ's defaults.
func DefaultFlowConfig() FlowConfig {
	return FlowConfig{
		PullThresholdForQueue:      1000,
		PullThresholdSizeForQueue:  100,
		PullThresholdForTopic:      -1,
		PullThresholdSizeForTopic:  -1,
		ConsumeConcurrentlyMaxSpan: 2000,
		FlowControlDelay:           50 * time.Millisecond,
		NotLockedDelay:             3 * time.Second,
	}
}

// WithDefaults returns c with every zero field set to its default, so
// that a config naming only the thresholds it changes is complete (zero is
// outside every field's range, and for the topic thresholds it means unset,
// as -1 does).
func (c FlowConfig) WithDefaults() FlowConfig {
	d := DefaultFlowConfig()
	for _, f := range []struct{ v, def *int64 }{
		{&c.PullThresholdForQueue, &d.PullThresholdForQueue},
		{&c.PullThresholdSizeForQueue, &d.PullThresholdSizeForQueue},
		{&c.PullThresholdForTopic, &d.PullThresholdForTopic},
		{&c.PullThresholdSizeForTopic, &d.PullThresholdSizeForTopic},
		{&c.ConsumeConcurrentlyMaxSpan, &d.ConsumeConcurrentlyMaxSpan},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if c.FlowControlDelay == 0 {
		c.FlowControlDelay = d.FlowControlDelay
	}
	if c.NotLockedDelay == 0 {
		c.NotLockedDelay = d.NotLockedDelay
	}
	return c
}

// ErrBadFlowConfig means a FlowConfig field is out of range; the wrapping
// error names it.
var ErrBadFlowConfig = errors.New("processqueue: bad flow config")

// Validate checks the ranges RocketMQ enforces.
func (c FlowConfig) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%w: %s is %v, want %s", ErrBadFlowConfig, field, v, want)
	}
	switch {
	case c.PullThresholdForQueue < 1 || c.PullThresholdForQueue > 65535:
		return bad("PullThresholdForQueue", c.PullThresholdForQueue, "1..65535")
	case c.PullThresholdSizeForQueue < 1 || c.PullThresholdSizeForQueue > 1024:
		return bad("PullThresholdSizeForQueue", c.PullThresholdSizeForQueue, "1..1024")
	case c.PullThresholdForTopic != -1 && (c.PullThresholdForTopic < 1 || c.PullThresholdForTopic > 6553500):
		return bad("PullThresholdForTopic", c.PullThresholdForTopic, "-1 or 1..6553500")
	case c.PullThresholdSizeForTopic != -1 && (c.PullThresholdSizeForTopic < 1 || c.PullThresholdSizeForTopic > 102400):
		return bad("PullThresholdSizeForTopic", c.PullThresholdSizeForTopic, "-1 or 1..102400")
	case c.ConsumeConcurrentlyMaxSpan < 1 || c.ConsumeConcurrentlyMaxSpan > 65535:
		return bad("ConsumeConcurrentlyMaxSpan", c.ConsumeConcurrentlyMaxSpan, "1..65535")
	case c.FlowControlDelay <= 0:
		return bad("FlowControlDelay", c.FlowControlDelay, "> 0")
	case c.NotLockedDelay <= 0:
		return bad("NotLockedDelay", c.NotLockedDelay, "> 0")
	}
	return nil
}

// QueueThresholds returns the per-queue message-count and MiB thresholds in
// force when the consumer holds queuesHeld process queues (over all its
// topics, as Java and the official Go client count them).
func (c FlowConfig) QueueThresholds(queuesHeld int) (count, sizeMiB int64) {
	count, sizeMiB = c.PullThresholdForQueue, c.PullThresholdSizeForQueue
	if queuesHeld <= 0 {
		return count, sizeMiB
	}
	if c.PullThresholdForTopic != -1 {
		count = max(1, c.PullThresholdForTopic/int64(queuesHeld))
	}
	if c.PullThresholdSizeForTopic != -1 {
		sizeMiB = max(1, c.PullThresholdSizeForTopic/int64(queuesHeld))
	}
	return count, sizeMiB
}

// Reason says why Decide did not allow a pull now.
type Reason int

const (
	// ReasonNone: pull now.
	ReasonNone Reason = iota
	// ReasonDropped: the queue was dropped; stop pulling it for good.
	ReasonDropped
	// ReasonCount: too many messages held.
	ReasonCount
	// ReasonSize: too many bytes held.
	ReasonSize
	// ReasonSpan: held offsets spread too far (concurrent consumption).
	ReasonSpan
	// ReasonNotLocked: orderly consumption without the broker lock.
	ReasonNotLocked
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonDropped:
		return "dropped"
	case ReasonCount:
		return "message count over threshold"
	case ReasonSize:
		return "message size over threshold"
	case ReasonSpan:
		return "offset span over threshold"
	case ReasonNotLocked:
		return "queue not locked"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Decision is Decide's answer.
type Decision struct {
	// Pull is true when the pull may be sent now.
	Pull bool
	// Delay is how long to wait before asking again; 0 with Pull false
	// means never (the queue was dropped).
	Delay time.Duration
	// Reason explains a refusal.
	Reason Reason
}

// Decide is the push consumer's pre-pull check, in Java's order: a dropped
// queue is never pulled; then the count, size and (concurrent) span
// thresholds delay the pull by FlowControlDelay; an orderly queue without
// its broker lock waits NotLockedDelay. Thresholds are exceeded only when
// strictly greater, and the size is compared in whole MiB (integer
// division), so the default 100 MiB limit trips at 101 MiB held.
func Decide(s Stats, c FlowConfig, orderly bool, queuesHeld int) Decision {
	if s.Dropped {
		return Decision{Reason: ReasonDropped}
	}
	maxCount, maxMiB := c.QueueThresholds(queuesHeld)
	if s.Count > maxCount {
		return Decision{Delay: c.FlowControlDelay, Reason: ReasonCount}
	}
	if s.SizeBytes/MiB > maxMiB {
		return Decision{Delay: c.FlowControlDelay, Reason: ReasonSize}
	}
	if !orderly && s.Span > c.ConsumeConcurrentlyMaxSpan {
		return Decision{Delay: c.FlowControlDelay, Reason: ReasonSpan}
	}
	if orderly && !s.Locked {
		return Decision{Delay: c.NotLockedDelay, Reason: ReasonNotLocked}
	}
	return Decision{Pull: true}
}

// Sampler bounds the rate of a repeated log line by count: it allows the
// first event and then every Every-th, as Java logs flow control on every
// thousandth event. Safe for concurrent use; the zero value allows every
// DefaultSampleEvery-th event.
type Sampler struct {
	// Every is the sampling period. Default (0): DefaultSampleEvery.
	Every uint64
	n     atomic.Uint64
}

// DefaultSampleEvery is Java's flow-control logging period.
const DefaultSampleEvery = 1000

// Allow counts an event and reports whether to log it.
func (s *Sampler) Allow() bool {
	every := s.Every
	if every == 0 {
		every = DefaultSampleEvery
	}
	return (s.n.Add(1)-1)%every == 0
}

// Count returns how many events were counted.
func (s *Sampler) Count() uint64 { return s.n.Load() }
