//go:build !race

// The official client's consumers race inside themselves; see smoke_test.go.

package integration

import (
	"context"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/remoting"
)

// The official client with WithTls(true) sends and consumes. In permissive
// mode plain official clients then use the same ports: a plain consumer
// gets the messages sent over TLS and those sent plain. The two phases run
// one after the other because the official client's WithTls is one
// process-wide setting (see officialPlainAgain); TLS and plain connections
// served side by side are shown with Runnel's client in remoting's
// TestTLSModes.
func TestTLSOfficialSendAndConsume(t *testing.T) {
	officialPlainAgain(t)
	for _, mode := range []string{remoting.TLSPermissive, remoting.TLSEnforcing} {
		t.Run(mode, func(t *testing.T) {
			c := startTLSCluster(t, mode)
			const topic, perWire = "TLSConsume", 10
			createTopicTLS(t, c, topic)
			sent := 0
			wires := []bool{true}
			if mode == remoting.TLSPermissive {
				wires = append(wires, false)
			}
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
				_ = p.Shutdown()
				sent += perWire

				// A new group of this wire gets everything sent so far.
				got := newCollector()
				pc := startOfficialTLSConsumer(t, c, fmt.Sprintf("cg-tls-%v", useTLS), topic, useTLS, got.add)
				testwait.For(t, 30*time.Second, fmt.Sprintf("%d messages consumed (tls=%v)", sent, useTLS),
					func() bool { return got.len() == sent })
				_ = pc.Shutdown()
				if got.get("tls=true-0") == nil {
					t.Fatalf("consumer (tls=%v) lacks the messages sent over TLS", useTLS)
				}
			}
		})
	}
}

func startOfficialTLSConsumer(t *testing.T, c tlsCluster, group, topic string, useTLS bool, fn func(*primitive.MessageExt)) rocketmq.PushConsumer {
	t.Helper()
	pc, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithInstance(instance("tlsc")),
		consumer.WithGroupName(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithTls(useTLS),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			fn(m)
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
	return pc
}
