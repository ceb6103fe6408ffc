//go:build !race

// The RocketMQ 5 SDK races inside itself under -race (it applies the
// server's Settings on its Telemetry goroutine while its producer and
// consumers read them); scripts/test.sh runs this file in its second
// pass, without -race.

package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestV5GroupFailover: a replicated group of three under a v5 producer
// and consumer given every node's door. A follower's door routes clients
// to its leader's and refuses writes HA_NOT_AVAILABLE naming it; the
// leader killed, sends reach the new leader, received messages
// acknowledged before stay acknowledged, and those in flight come back
// (their receipts were replicated), every sent message received.
func TestV5GroupFailover(t *testing.T) {
	c := startV5(t, cluster.Group(3))
	l := c.Leader()
	f := (l + 1) % 3
	r := dialV5(t, c, f, false)
	createTopic(t, c, l, "V5Group", 2)
	testwait.For(t, 10*time.Second, "the topic on every node", func() bool {
		for i := range 3 {
			if _, ok, _ := c.Broker(i).Store().Topic("V5Group"); !ok {
				return false
			}
		}
		return true
	})
	route, err := r.QueryRoute(r.ctx(t), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "V5Group"}})
	wantCode(t, "a follower's route", route.GetStatus(), err, v2.Code_OK)
	ep := route.GetMessageQueues()[0].GetBroker().GetEndpoints().GetAddresses()[0]
	if got := fmt.Sprintf("%s:%d", ep.GetHost(), ep.GetPort()); got != c.GRPCAddr(l) {
		t.Fatalf("a follower routes to %s, want the leader's door %s", got, c.GRPCAddr(l))
	}
	send, err := r.SendMessage(r.ctx(t), &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5Group", v2.MessageType_NORMAL, "x")}})
	wantCode(t, "a follower's send", send.GetStatus(), err, v2.Code_HA_NOT_AVAILABLE)

	cfg := &rmq5.Config{Endpoint: c.GRPCAddrs()}
	p := newV5ProducerWith(t, cfg, []string{"V5Group"})
	sendUntil := func(b string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := p.Send(ctx, &rmq5.Message{Topic: "V5Group", Body: []byte(b)})
			cancel()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("send %s: %v", b, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i := range 10 {
		sendUntil(body(i))
	}
	scCfg := &rmq5.Config{Endpoint: c.GRPCAddrs(), ConsumerGroup: "v5-group"}
	sc, err := rmq5.NewSimpleConsumer(scCfg, rmq5.WithSimpleAwaitDuration(5*time.Second),
		rmq5.WithSimpleSubscriptionExpressions(map[string]*rmq5.FilterExpression{"V5Group": rmq5.SUB_ALL}))
	sc = startedV5(t, "simple consumer", sc, err)
	first := v5Receive(t, sc, 10, 10*time.Second, 30*time.Second)
	if len(first) != 10 {
		t.Fatalf("received %d of 10 before the failover", len(first))
	}
	acked := map[string]bool{}
	for _, mv := range first[:5] {
		if err := sc.Ack(context.Background(), mv); err != nil {
			t.Fatal(err)
		}
		acked[string(mv.GetBody())] = true
	}

	c.KillBroker(l)
	c.Leader(l)
	for i := 10; i < 20; i++ {
		sendUntil(body(i))
	}
	want := map[string]bool{}
	for i := range 20 {
		if !acked[body(i)] {
			want[body(i)] = true
		}
	}
	got := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		mvs, err := sc.Receive(context.Background(), 16, 10*time.Second)
		var st *rmq5.ErrRpcStatus
		if err != nil && !errors.As(err, &st) {
			time.Sleep(200 * time.Millisecond) // the route still names the old leader
			continue
		}
		for _, mv := range mvs {
			b := string(mv.GetBody())
			if acked[b] {
				t.Fatalf("%s, acknowledged before the failover, came back", b)
			}
			got[b] = true
			_ = sc.Ack(context.Background(), mv)
		}
	}
	for b := range want {
		if !got[b] {
			t.Errorf("%s never received after the failover", b)
		}
	}
}
