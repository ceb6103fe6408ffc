package processqueue

import (
	"errors"
	"testing"
	"time"
)

func TestDecideTable(t *testing.T) {
	def := DefaultFlowConfig()
	topic := def
	topic.PullThresholdForTopic = 1000
	topic.PullThresholdSizeForTopic = 40

	tests := []struct {
		name    string
		s       Stats
		c       FlowConfig
		orderly bool
		held    int
		want    Decision
	}{
		{"empty", Stats{}, def, false, 1, Decision{Pull: true}},
		{"count at threshold", Stats{Count: 1000}, def, false, 1, Decision{Pull: true}},
		{"count over", Stats{Count: 1001}, def, false, 1, Decision{Delay: 50 * time.Millisecond, Reason: ReasonCount}},
		{"size just under 101 MiB", Stats{SizeBytes: 101*MiB - 1}, def, false, 1, Decision{Pull: true}},
		{"size 101 MiB", Stats{SizeBytes: 101 * MiB}, def, false, 1, Decision{Delay: 50 * time.Millisecond, Reason: ReasonSize}},
		{"span at threshold", Stats{Span: 2000}, def, false, 1, Decision{Pull: true}},
		{"span over", Stats{Span: 2001}, def, false, 1, Decision{Delay: 50 * time.Millisecond, Reason: ReasonSpan}},
		{"orderly ignores span", Stats{Span: 5000, Locked: true}, def, true, 1, Decision{Pull: true}},
		{"orderly not locked", Stats{}, def, true, 1, Decision{Delay: 3 * time.Second, Reason: ReasonNotLocked}},
		{"dropped beats everything", Stats{Dropped: true, Count: 5000}, def, false, 1, Decision{Reason: ReasonDropped}},
		{"count before size", Stats{Count: 2000, SizeBytes: 500 * MiB}, def, false, 1, Decision{Delay: 50 * time.Millisecond, Reason: ReasonCount}},
		{"count before lock", Stats{Count: 2000}, def, true, 1, Decision{Delay: 50 * time.Millisecond, Reason: ReasonCount}},
		// Topic thresholds: 1000 messages / 4 queues = 250 each; 40 MiB / 4 = 10.
		{"topic count ok", Stats{Count: 250}, topic, false, 4, Decision{Pull: true}},
		{"topic count over", Stats{Count: 251}, topic, false, 4, Decision{Delay: 50 * time.Millisecond, Reason: ReasonCount}},
		{"topic size over", Stats{SizeBytes: 11 * MiB}, topic, false, 4, Decision{Delay: 50 * time.Millisecond, Reason: ReasonSize}},
		// With no queue count known, the per-queue thresholds stand.
		{"topic unknown held", Stats{Count: 999}, topic, false, 0, Decision{Pull: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.s, tt.c, tt.orderly, tt.held); got != tt.want {
				t.Fatalf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestQueueThresholdsFloorAtOne(t *testing.T) {
	c := DefaultFlowConfig()
	c.PullThresholdForTopic, c.PullThresholdSizeForTopic = 3, 2
	if n, s := c.QueueThresholds(10); n != 1 || s != 1 {
		t.Fatalf("QueueThresholds(10) = %d, %d; want 1, 1", n, s)
	}
	if n, s := DefaultFlowConfig().QueueThresholds(10); n != 1000 || s != 100 {
		t.Fatalf("unset topic thresholds changed the per-queue ones: %d, %d", n, s)
	}
}

func TestFlowConfigValidate(t *testing.T) {
	if err := DefaultFlowConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	for _, mut := range []func(*FlowConfig){
		func(c *FlowConfig) { c.PullThresholdForQueue = 0 },
		func(c *FlowConfig) { c.PullThresholdForQueue = 65536 },
		func(c *FlowConfig) { c.PullThresholdSizeForQueue = 1025 },
		func(c *FlowConfig) { c.PullThresholdForTopic = 0 },
		func(c *FlowConfig) { c.PullThresholdSizeForTopic = -2 },
		func(c *FlowConfig) { c.ConsumeConcurrentlyMaxSpan = 0 },
		func(c *FlowConfig) { c.FlowControlDelay = 0 },
		func(c *FlowConfig) { c.NotLockedDelay = -time.Second },
	} {
		c := DefaultFlowConfig()
		mut(&c)
		if err := c.Validate(); !errors.Is(err, ErrBadFlowConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrBadFlowConfig", c, err)
		}
	}
}

func TestSampler(t *testing.T) {
	s := Sampler{Every: 3}
	var got []bool
	for range 7 {
		got = append(got, s.Allow())
	}
	want := []bool{true, false, false, true, false, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Allow sequence = %v, want %v", got, want)
		}
	}
	var d Sampler
	if !d.Allow() || d.Allow() || d.Count() != 2 {
		t.Fatal("zero Sampler must allow the first event only (period 1000)")
	}
}

// TestSlowConsumerStaysWithinOneBatch simulates a pull loop gated by Decide
// against a consumer slower than the puller: the queue never holds more than
// the threshold plus one pull batch, and pulls resume as it drains.
func TestSlowConsumerStaysWithinOneBatch(t *testing.T) {
	const batch = 32
	cfg := DefaultFlowConfig()
	pq := newPQ(newClock())
	var next int64
	pulls, refusals := 0, 0
	for step := range 20000 {
		if d := Decide(pq.Stats(), cfg, false, 1); d.Pull {
			b := make([]msg, batch)
			for i := range b {
				b[i] = msg{off: next, size: 1024}
				next++
			}
			pq.Put(b)
			pulls++
		} else {
			refusals++
			if d.Reason != ReasonCount && d.Reason != ReasonSpan {
				t.Fatalf("unexpected refusal %v", d.Reason)
			}
		}
		if s := pq.Stats(); s.Count > cfg.PullThresholdForQueue+batch {
			t.Fatalf("step %d: %d messages held, threshold %d + batch %d", step, s.Count, cfg.PullThresholdForQueue, batch)
		}
		// Consume one message per step, lowest first.
		if s := pq.Stats(); s.Count > 0 {
			pq.Remove([]msg{{off: s.MinOffset}})
		}
	}
	if refusals == 0 || pulls < 20000/batch {
		t.Fatalf("pulls %d, refusals %d: flow control never engaged or starved the queue", pulls, refusals)
	}
}
