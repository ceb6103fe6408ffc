//go:build !race

// The official client's consumers race inside themselves; see consumer_test.go.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/internal/testwait"
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
				pc := newPushConsumer(t, c.Cluster, fmt.Sprintf("cg-tls-%v", useTLS), topic, "*", got.add, consumer.WithTls(useTLS))
				testwait.For(t, 30*time.Second, fmt.Sprintf("%d messages consumed (tls=%v)", sent, useTLS),
					func() bool { return got.len() == sent })
				pc.shutdown()
				if got.get("tls=true-0") == nil {
					t.Fatalf("consumer (tls=%v) lacks the messages sent over TLS", useTLS)
				}
			}
		})
	}
}
