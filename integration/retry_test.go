//go:build !race

// The official client's push consumer races with itself under -race (its
// process queue is an unsynchronised treemap shared by the pull and
// consume goroutines; see orderly_test.go), which fails the test binary.
// This file is built without -race only; the broker side of retry, DLQ and
// delay is covered by race-enabled tests in packages broker and
// broker/due.

package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// shortDelays makes retries quick: level n waits n*100 ms (levels 3 and 4,
// the first retries, wait 300 and 400 ms).
const shortDelays = "100ms 200ms 300ms 400ms 500ms 600ms 700ms 800ms 900ms 1s 1s 1s 1s 1s 1s 1s 1s 1s"

func delayCluster(t *testing.T, levels string) *cluster.Cluster {
	t.Helper()
	t.TempDir() // see rcCluster: the directory must outlive the brokers
	return cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.MessageDelayLevel = levels }))
}

// delivery is one call of the listener for a message.
type delivery struct {
	topic          string
	msgID          string
	reconsumeTimes int32
	retryTopic     string
	at             time.Time
}

type deliveries struct {
	mu  sync.Mutex
	all map[string][]delivery // by body
}

func newDeliveries() *deliveries { return &deliveries{all: map[string][]delivery{}} }

func (d *deliveries) add(m *primitive.MessageExt) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := string(m.Body)
	d.all[b] = append(d.all[b], delivery{topic: m.Topic, msgID: m.MsgId, reconsumeTimes: m.ReconsumeTimes,
		retryTopic: m.GetProperty(primitive.PropertyRetryTopic), at: time.Now()})
	return len(d.all[b])
}

func (d *deliveries) of(body string) []delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]delivery(nil), d.all[body]...)
}

// TestRetryLater: a listener that answers RECONSUME_LATER gets the
// message again, through %RETRY%<group> (CONSUMER_SEND_MSG_BACK and the
// delay levels), with ReconsumeTimes 1 and the same id and topic.
func TestRetryLater(t *testing.T) {
	c := delayCluster(t, shortDelays)
	createTopic(t, c, 0, "RetryT", 2)
	p := newProducer(t, c)
	res, err := p.SendSync(context.Background(), primitive.NewMessage("RetryT", []byte("fail-once")))
	if err != nil {
		t.Fatal(err)
	}
	// A new group's retry topic appears at its first heartbeat, after the
	// client first asked for its route; the client then finds it at its next
	// route poll (30 s). Created up front, retries flow from the start.
	createTopic(t, c, 0, "%RETRY%g-retry", 1)
	d := newDeliveries()
	startListener(t, c, "g-retry", "RetryT", "", func(m *primitive.MessageExt) consumer.ConsumeResult {
		if d.add(m) == 1 {
			return consumer.ConsumeRetryLater
		}
		return consumer.ConsumeSuccess
	})
	testwait.For(t, 30*time.Second, "the message delivered again", func() bool { return len(d.of("fail-once")) >= 2 })
	got := d.of("fail-once")
	first, again := got[0], got[1]
	if first.reconsumeTimes != 0 || again.reconsumeTimes < 1 {
		t.Fatalf("reconsume times %d then %d", first.reconsumeTimes, again.reconsumeTimes)
	}
	if again.topic != "RetryT" || again.retryTopic != "RetryT" || again.msgID != res.MsgID {
		t.Fatalf("retry delivered as topic %q, RETRY_TOPIC %q, id %q (sent id %q)", again.topic, again.retryTopic, again.msgID, res.MsgID)
	}
	// Level 3 + 0 = 300 ms with shortDelays, counted from the retry's store
	// timestamp, which is whole milliseconds: allow that 1 ms of rounding.
	if gap := again.at.Sub(first.at); gap < 299*time.Millisecond {
		t.Fatalf("redelivered after %v, before the 300 ms of level 3", gap)
	}
	if n := c.Broker(0).Store().MaxOffset("%RETRY%g-retry", 0); n != 1 {
		t.Fatalf("retry topic holds %d messages, want 1", n)
	}
}

// TestDeadLetter: with MaxReconsumeTimes 2 a message that always fails is
// delivered three times (reconsume times 0, 1, 2) and then lands in
// %DLQ%<group>, which is created write-only and registered with the name
// server.
func TestDeadLetter(t *testing.T) {
	c := delayCluster(t, shortDelays)
	createTopic(t, c, 0, "DeadT", 1)
	p := newProducer(t, c)
	msg := primitive.NewMessage("DeadT", []byte("always-fails"))
	msg.WithKeys([]string{"dead-key"})
	if _, err := p.SendSync(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	createTopic(t, c, 0, "%RETRY%g-dead", 1) // see TestRetryLater
	d := newDeliveries()
	startListener(t, c, "g-dead", "DeadT", "", func(m *primitive.MessageExt) consumer.ConsumeResult {
		d.add(m)
		return consumer.ConsumeRetryLater
	}, consumer.WithMaxReconsumeTimes(2))
	st := c.Broker(0).Store()
	testwait.For(t, 30*time.Second, "the message in %DLQ%g-dead", func() bool { return st.MaxOffset("%DLQ%g-dead", 0) == 1 })
	res, err := st.Get("%DLQ%g-dead", 0, 0, 10, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := message.DecodeMessages(res.Messages)
	if err != nil || len(ms) != 1 {
		t.Fatalf("DLQ: %d messages, %v", len(ms), err)
	}
	dead := ms[0]
	if string(dead.Body) != "always-fails" || dead.ReconsumeTimes != 3 || dead.Property("RETRY_TOPIC") != "DeadT" ||
		dead.Property("KEYS") != "dead-key" || dead.Property("ORIGIN_MESSAGE_ID") == "" {
		t.Fatalf("dead letter: %+v", dead)
	}
	got := d.of("always-fails")
	if len(got) != 3 {
		t.Fatalf("delivered %d times, want 3 (the first try and 2 retries)", len(got))
	}
	for i, g := range got {
		if g.reconsumeTimes != int32(i) {
			t.Fatalf("delivery %d has reconsume times %d", i, g.reconsumeTimes)
		}
	}
	testwait.For(t, testwait.Default, "the DLQ topic routed", func() bool {
		r, code := routeOf(t, c, "%DLQ%g-dead")
		return code == protocol.RespSuccess && len(r.QueueDatas) == 1 && r.QueueDatas[0].Perm == protocol.PermRead|protocol.PermWrite
	})
	// Nothing is left that could deliver it a 4th time: the retry topic
	// holds the two retries, both delivered above, and the schedule has
	// handed on every delayed message it holds. A new retry needs a new
	// failure, so a new delivery.
	testwait.Until(t, testwait.Default, "the schedule drained", func() error {
		for level, next := range c.Broker(0).DelayProgress() {
			if end := st.MaxOffset("SCHEDULE_TOPIC_XXXX", level-1); next != end {
				return fmt.Errorf("level %d: next %d of %d", level, next, end)
			}
		}
		return nil
	})
	if n := st.MaxOffset("%RETRY%g-dead", 0); n != 2 {
		t.Fatalf("retry topic holds %d messages, want the 2 retries", n)
	}
	if n := len(d.of("always-fails")); n != 3 {
		t.Fatalf("delivered %d times after the DLQ", n)
	}
}
