//go:build !race

// Built without -race only: the official client's push consumer races
// with itself (see retry_test.go). The broker side of delayed delivery is
// covered under -race in packages broker and broker/due.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
)

// delayTestLevels: level n waits n seconds.
const delayTestLevels = "1s 2s 3s 4s 5s 6s"

// TestDelayedMessage: a message sent with delay level 2 (2 s here)
// reaches the consumer no sooner than 2 s after it was sent, and soon
// after.
func TestDelayedMessage(t *testing.T) {
	c := delayCluster(t, delayTestLevels)
	createTopic(t, c, 0, "DelayT", 2)
	d := newDeliveries()
	newPushConsumer(t, c, "g-delay", "DelayT", "*", func(m *primitive.MessageExt) { d.add(m) })
	p := newProducer(t, c)
	// Let the consumer settle first, so its pulls are parked when the
	// message comes due.
	if _, err := p.SendSync(context.Background(), primitive.NewMessage("DelayT", []byte("warm-up"))); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 30*time.Second, "the warm-up message", func() bool { return len(d.of("warm-up")) == 1 })

	sent := time.Now().Truncate(time.Millisecond) // store times are in ms
	m := primitive.NewMessage("DelayT", []byte("delayed"))
	m.WithDelayTimeLevel(2)
	if _, err := p.SendSync(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, testwait.Default, "the delayed message", func() bool { return len(d.of("delayed")) == 1 })
	got := d.of("delayed")[0]
	lag := got.at.Sub(sent)
	if lag < 2*time.Second {
		t.Fatalf("delivered %v after sending, before its 2 s delay", lag)
	}
	if lag > 3500*time.Millisecond {
		t.Fatalf("delivered %v after sending; due after 2 s", lag)
	}
	if got.topic != "DelayT" {
		t.Fatalf("delivered on topic %q", got.topic)
	}
	t.Logf("level 2 (2 s) delivered after %v", lag)
}

// TestDelayedSurviveRestart: delayed messages pending when the broker
// stops are delivered after it starts again, and those delivered before
// are not delivered again; each message is stored in its real queue
// exactly once. Once with a clean stop, once with Abort, which skips the
// offset persist and the unregistration but still stops the schedule and
// closes the store cleanly, so it is no crash of the delivery itself: that
// is TestProcessDelayedDeliveryAcrossSIGKILL in cmd/broker, which
// SIGKILLs a broker process mid-delivery.
func TestDelayedSurviveRestart(t *testing.T) {
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("abort=%v", abort), func(t *testing.T) {
			c := delayCluster(t, delayTestLevels)
			const topic = "DelayR"
			createTopic(t, c, 0, topic, 2)
			p := newProducer(t, c)
			send := func(prefix string, level, n int) {
				t.Helper()
				for i := range n {
					m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%d", prefix, i)))
					m.WithDelayTimeLevel(level)
					if _, err := p.SendSync(context.Background(), m); err != nil {
						t.Fatal(err)
					}
				}
			}
			const n = 10
			send("soon", 1, n)  // 1 s: delivered before the restart
			send("later", 5, n) // 5 s: pending across it
			st := c.Broker(0).Store()
			testwait.For(t, testwait.Default, "the level-1 messages delivered", func() bool {
				return st.MaxOffset(topic, 0)+st.MaxOffset(topic, 1) == n
			})
			if abort {
				c.KillBroker(0)
			}
			c.RestartBroker(0)

			d := newDeliveries()
			newPushConsumer(t, c, "g-delay-restart", topic, "*", func(m *primitive.MessageExt) { d.add(m) })
			testwait.For(t, 30*time.Second, "every message consumed", func() bool {
				for i := range n {
					if len(d.of(fmt.Sprintf("soon-%d", i))) == 0 || len(d.of(fmt.Sprintf("later-%d", i))) == 0 {
						return false
					}
				}
				return true
			})
			// The store is the judge of duplicate delivery: consumer offsets
			// are at-least-once anyway.
			st = c.Broker(0).Store()
			count := map[string]int{}
			for q := int32(0); q < 2; q++ {
				res, err := st.Get(topic, q, 0, 100, 0, nil)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := message.DecodeMessages(res.Messages)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					count[string(m.Body)]++
				}
			}
			if len(count) != 2*n {
				t.Fatalf("%d distinct messages stored, want %d", len(count), 2*n)
			}
			for b, k := range count {
				if k != 1 {
					t.Fatalf("%s stored %d times in its real queue", b, k)
				}
			}
		})
	}
}
