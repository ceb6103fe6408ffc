//go:build !race

// Built without -race only: the official client's push consumer races
// with itself (see retry_test.go). The broker side of timer messages is
// covered under -race in timer_test.go and broker/due.

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestTimerConsumedAtItsTime: an official push consumer receives a
// WithDelayTimestamp message no sooner than its time, and soon after.
func TestTimerConsumedAtItsTime(t *testing.T) {
	c := rcCluster(t)
	createTopic(t, c, 0, "TimerC", 2)
	d := newDeliveries()
	newPushConsumer(t, c, "g-timer", "TimerC", "*", func(m *primitive.MessageExt) { d.add(m) })
	p := newProducer(t, c)
	// Let the consumer settle first, so its pulls are parked when the
	// message comes due.
	if _, err := p.SendSync(context.Background(), primitive.NewMessage("TimerC", []byte("warm-up"))); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, "the warm-up message", func() bool { return len(d.of("warm-up")) == 1 })

	// The message carries its time in whole milliseconds
	// (__STARTDELIVERTIME), so that is the time it is due: a sub-millisecond
	// part kept here made a delivery on time look up to 1 ms early.
	at := time.UnixMilli(time.Now().Add(1500 * time.Millisecond).UnixMilli())
	m := primitive.NewMessage("TimerC", []byte("timed"))
	m.WithDelayTimestamp(at)
	if _, err := p.SendSync(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 20*time.Second, "the timer message", func() bool { return len(d.of("timed")) == 1 })
	got := d.of("timed")[0]
	if got.at.Before(at) {
		t.Fatalf("consumed %v before its time", at.Sub(got.at))
	}
	if late := got.at.Sub(at); late > timerLate {
		t.Fatalf("consumed %v after its time", late)
	}
	if got.topic != "TimerC" {
		t.Fatalf("consumed on topic %q", got.topic)
	}
	t.Logf("consumed %v after its time", got.at.Sub(at))
}
