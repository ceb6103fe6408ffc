//go:build !race

// The RocketMQ 5 SDK races inside itself under -race (it applies the
// server's Settings on its Telemetry goroutine while its producer and
// consumers read them); scripts/test.sh runs this file in its second
// pass, without -race.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
)

// v5Receive receives until n messages came or the deadline passed.
func v5Receive(t testing.TB, sc rmq5.SimpleConsumer, n int, invisible time.Duration, within time.Duration) []*rmq5.MessageView {
	t.Helper()
	var out []*rmq5.MessageView
	deadline := time.Now().Add(within)
	for len(out) < n && time.Now().Before(deadline) {
		mvs, err := sc.Receive(context.Background(), int32(n-len(out)), invisible)
		if err != nil {
			if st, ok := rmq5.AsErrRpcStatus(err); ok && st.GetCode() == 40401 { // MESSAGE_NOT_FOUND
				continue
			}
			t.Fatalf("receive: %v", err)
		}
		out = append(out, mvs...)
	}
	return out
}

// TestV5SimpleConsumer: the SDK's SimpleConsumer receives with its own
// invisible time and acknowledges; a message it does not acknowledge
// comes back once its invisible time passed, its delivery attempt 2; one
// whose invisible time it changed is acknowledged with the new handle.
func TestV5SimpleConsumer(t *testing.T) {
	c := startV5(t)
	topic, group := "V5Simple", "v5-simple"
	// One queue: the consumer's receives round-robin over the queues, each
	// held up to 5 s on an empty one, and collecting the three from four
	// queues could outlast their 10 s of invisible time on a loaded
	// machine (the first one then came back within the collection).
	createTopic(t, c, 0, topic, 1)
	p := newV5Producer(t, c, []string{topic})
	for i := range 3 {
		v5Send(t, p, &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprint(i))})
	}
	sc := newV5SimpleConsumer(t, c, group, map[string]*rmq5.FilterExpression{topic: rmq5.SUB_ALL}, 5*time.Second)
	got := v5Receive(t, sc, 3, 10*time.Second, 20*time.Second)
	if len(got) != 3 {
		t.Fatalf("received %d of 3", len(got))
	}
	var kept, changed *rmq5.MessageView
	for _, mv := range got {
		if mv.GetDeliveryAttempt() != 1 || mv.GetReceiptHandle() == "" {
			t.Fatalf("first delivery with attempt %d, handle %q", mv.GetDeliveryAttempt(), mv.GetReceiptHandle())
		}
		switch string(mv.GetBody()) {
		case "0":
			if err := sc.Ack(context.Background(), mv); err != nil {
				t.Fatalf("ack: %v", err)
			}
		case "1":
			kept = mv // not acknowledged: back after its invisible time
		case "2":
			changed = mv
		}
	}
	old := changed.GetReceiptHandle()
	if err := sc.ChangeInvisibleDuration(changed, time.Minute); err != nil {
		t.Fatalf("change invisible duration: %v", err)
	}
	if changed.GetReceiptHandle() == old || changed.GetReceiptHandle() == "" {
		t.Fatalf("change invisible duration kept the handle %q", old)
	}
	if err := sc.Ack(context.Background(), changed); err != nil {
		t.Fatalf("ack with the new handle: %v", err)
	}

	again := v5Receive(t, sc, 1, 10*time.Second, 25*time.Second)
	if len(again) != 1 || string(again[0].GetBody()) != "1" || again[0].GetDeliveryAttempt() != 2 ||
		again[0].GetMessageId() != kept.GetMessageId() {
		t.Fatalf("after the invisible time: %d messages %v", len(again), views(again))
	}
	if err := sc.Ack(context.Background(), again[0]); err != nil {
		t.Fatalf("ack the redelivery: %v", err)
	}
	if more := v5Receive(t, sc, 1, 10*time.Second, 6*time.Second); len(more) != 0 {
		t.Fatalf("acknowledged messages came back: %v", views(more))
	}
}

func views(mvs []*rmq5.MessageView) []string {
	var out []string
	for _, mv := range mvs {
		out = append(out, fmt.Sprintf("%s(attempt %d)", mv.GetBody(), mv.GetDeliveryAttempt()))
	}
	return out
}
