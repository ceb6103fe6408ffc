//go:build !race

// The official client's consumers race inside themselves; see smoke_test.go.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/remoting"
)

// The official client with WithTls(true) sends and consumes; in permissive
// mode a plain producer and a plain consumer share the ports with it, and
// each consumer gets every message whichever wire it was sent over.
func TestTLSOfficialSendAndConsume(t *testing.T) {
	for _, mode := range []string{remoting.TLSPermissive, remoting.TLSEnforcing} {
		t.Run(mode, func(t *testing.T) {
			c := startTLSCluster(t, mode)
			const topic = "TLSConsume"
			createTopicTLS(t, c, topic)
			wires := []bool{true}
			if mode == remoting.TLSPermissive {
				wires = append(wires, false)
			}
			const perWire = 10
			for _, useTLS := range wires {
				p := officialTLSProducer(t, c, useTLS)
				for i := range perWire {
					m := primitive.NewMessage(topic, []byte(fmt.Sprintf("tls=%v-%d", useTLS, i)))
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					res, err := p.SendSync(ctx, m)
					cancel()
					if err != nil || res.Status != primitive.SendOK {
						t.Fatalf("send (tls=%v): %v, %v", useTLS, res, err)
					}
				}
			}
			want := perWire * len(wires)
			for _, useTLS := range wires {
				got := newCollector()
				pc, err := rocketmq.NewPushConsumer(
					consumer.WithNameServer([]string{c.nsAddr}),
					consumer.WithInstance(instance("tlsc")),
					consumer.WithGroupName(fmt.Sprintf("cg-tls-%v", useTLS)),
					consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
					consumer.WithTls(useTLS),
				)
				if err != nil {
					t.Fatal(err)
				}
				err = pc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
					for _, m := range msgs {
						got.add(m)
					}
					return consumer.ConsumeSuccess, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := pc.Start(); err != nil {
					t.Fatalf("start consumer (tls=%v): %v", useTLS, err)
				}
				t.Cleanup(func() { _ = pc.Shutdown() })
				eventually(t, 30*time.Second, fmt.Sprintf("%d messages consumed (tls=%v)", want, useTLS),
					func() bool { return got.len() == want })
				for _, sentTLS := range wires {
					if got.get(fmt.Sprintf("tls=%v-0", sentTLS)) == nil {
						t.Fatalf("consumer (tls=%v) lacks a message sent with tls=%v", useTLS, sentTLS)
					}
				}
			}
		})
	}
}
