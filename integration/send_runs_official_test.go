//go:build !race

// Built without -race only: the official client's push consumer races with
// itself (see retry_test.go).

package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/testwait"
)

// Many goroutines sending through one producer put several sends in one
// read of the broker, which stores them with one write (a run). Checked
// with a model: every acknowledged send, of our client's and of the
// official client's, is delivered once, with its body and its message id,
// and our client's sends took fewer store writes than messages.
func TestManySendersOnOneConnection(t *testing.T) {
	c := rcCluster(t)
	const topic, senders, each = "many_senders", 16, 40
	createTopic(t, c, 0, topic, 4)

	var mu sync.Mutex
	sent := map[string]string{} // body -> the message id its answer gave
	ack := func(body, id string) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := sent[body]; dup {
			t.Errorf("%s acknowledged twice", body)
		}
		sent[body] = id
	}

	ours := rcProducer(t, c)
	syncs := c.Broker(0).Store().Stats().Syncs
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				body := fmt.Sprintf("ours-%02d-%03d", g, i)
				res, err := ours.Send(context.Background(), &client.Message{Topic: topic, Body: []byte(body)})
				if err != nil {
					t.Errorf("send %s: %v", body, err)
					return
				}
				ack(body, res.MsgID)
			}
		})
	}
	wg.Wait()
	if got := c.Broker(0).Store().Stats().Syncs - syncs; got >= senders*each {
		t.Errorf("%d sends of %d goroutines over one connection took %d store writes: none shared one", senders*each, senders, got)
	}

	official := newProducer(t, c)
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				body := fmt.Sprintf("official-%02d-%03d", g, i)
				res, err := official.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body)))
				if err != nil || res.Status != primitive.SendOK {
					t.Errorf("send %s: %v %v", body, res, err)
					return
				}
				ack(body, res.MsgID)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	got := newCollector()
	newPushConsumer(t, c, "many_senders_cg", topic, "", got.add)
	testwait.For(t, 30*time.Second, "every acknowledged message", func() bool { return got.len() == len(sent) })
	for body, id := range sent {
		m := got.get(body)
		if m == nil || m.MsgId != id {
			t.Fatalf("%s: delivered %v, acknowledged as %s", body, m, id)
		}
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if got.dups != 0 {
		t.Fatalf("%d messages delivered twice", got.dups)
	}
}
