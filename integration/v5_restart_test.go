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

// TestV5RestartWithMessagesInFlight: messages received and acknowledged
// before a broker restart never come back; those received but not
// acknowledged are not lost: they come back after their invisible time,
// to a consumer that reconnects to the restarted broker by itself.
func TestV5RestartWithMessagesInFlight(t *testing.T) {
	c := startV5(t)
	topic, group := "V5Restart", "v5-restart"
	p := newV5Producer(t, c, []string{topic})
	const n = 10
	for i := range n {
		v5Send(t, p, &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprint(i))})
	}
	sc := newV5SimpleConsumer(t, c, group, map[string]*rmq5.FilterExpression{topic: rmq5.SUB_ALL}, 5*time.Second)
	got := v5Receive(t, sc, n, 10*time.Second, 20*time.Second)
	if len(got) != n {
		t.Fatalf("received %d of %d", len(got), n)
	}
	acked := map[string]bool{}
	for _, mv := range got[:n/2] {
		if err := sc.Ack(context.Background(), mv); err != nil {
			t.Fatal(err)
		}
		acked[string(mv.GetBody())] = true
	}
	c.RestartBroker(0)

	back := map[string]bool{}
	deadline := time.Now().Add(40 * time.Second)
	for len(back) < n-len(acked) && time.Now().Before(deadline) {
		mvs, err := sc.Receive(context.Background(), n, 10*time.Second)
		if err != nil {
			continue // the connection comes back; nothing yet
		}
		for _, mv := range mvs {
			b := string(mv.GetBody())
			if acked[b] {
				t.Fatalf("acknowledged message %s came back", b)
			}
			if back[b] {
				t.Fatalf("message %s delivered twice after the restart", b)
			}
			if mv.GetDeliveryAttempt() != 2 {
				t.Errorf("message %s came back at attempt %d, want 2", b, mv.GetDeliveryAttempt())
			}
			back[b] = true
			_ = sc.Ack(context.Background(), mv)
		}
	}
	if len(back) != n-len(acked) {
		t.Fatalf("after the restart %d of the %d unacknowledged messages came back: %v", len(back), n-len(acked), back)
	}
}
