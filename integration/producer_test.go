//go:build !race

// These tests drive the official client's consumers, which report data races
// inside themselves under -race (their rebalance against their own offset
// store and pull paths). They run in the test command's race-free pass, so a
// race of theirs cannot fail CI for a reason that is not ours.

package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestProducerModes sends with every mode of the official producer to a
// topic it auto-creates (no admin call: the TBW102 path), then checks a
// push consumer receives every message intact.
func TestProducerModes(t *testing.T) {
	c := cluster.Start(t)
	const topic = "AutoCreated"
	p := newProducer(t, c)
	ctx := context.Background()

	want := map[string]string{} // body -> tag
	send := func(body, tag string) *primitive.Message {
		m := primitive.NewMessage(topic, []byte(body))
		m.WithTag(tag)
		m.WithKeys([]string{"key-" + body})
		want[body] = tag
		return m
	}

	// Sync, the first one creating the topic.
	for i := range 5 {
		res, err := p.SendSync(ctx, send(fmt.Sprintf("sync-%d", i), "S"))
		if err != nil {
			t.Fatalf("sync send: %v", err)
		}
		if res.Status != primitive.SendOK || res.OffsetMsgID == "" || res.MsgID == "" {
			t.Fatalf("sync result %+v", res)
		}
	}
	// Async.
	var wg sync.WaitGroup
	var asyncErr error
	var mu sync.Mutex
	for i := range 5 {
		wg.Add(1)
		err := p.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
			defer wg.Done()
			if err == nil && res.Status != primitive.SendOK {
				err = fmt.Errorf("status %v", res.Status)
			}
			if err != nil {
				mu.Lock()
				asyncErr = err
				mu.Unlock()
			}
		}, send(fmt.Sprintf("async-%d", i), "A"))
		if err != nil {
			t.Fatalf("async send: %v", err)
		}
	}
	wg.Wait()
	if asyncErr != nil {
		t.Fatalf("async send: %v", asyncErr)
	}
	// Oneway.
	for i := range 5 {
		if err := p.SendOneWay(ctx, send(fmt.Sprintf("oneway-%d", i), "O")); err != nil {
			t.Fatalf("oneway send: %v", err)
		}
	}
	// Batch (one SEND_BATCH_MESSAGE).
	var batch []*primitive.Message
	for i := range 10 {
		batch = append(batch, send(fmt.Sprintf("batch-%d", i), "B"))
	}
	res, err := p.SendSync(ctx, batch...)
	if err != nil {
		t.Fatalf("batch send: %v", err)
	}
	if ids := strings.Split(res.OffsetMsgID, ","); len(ids) != 10 {
		t.Fatalf("batch offsetMsgIds: %d ids in %q", len(ids), res.OffsetMsgID)
	}
	// A 1 MiB body, compressible, so the client zlib-compresses it.
	big := bytes.Repeat([]byte("runnel-1MiB-body "), (1<<20)/17+1)[:1<<20]
	bigMsg := primitive.NewMessage(topic, big)
	bigMsg.WithTag("BIG")
	if _, err := p.SendSync(ctx, bigMsg); err != nil {
		t.Fatalf("1 MiB send: %v", err)
	}

	got := newCollector()
	newPushConsumer(t, c, "g-modes", topic, "*", got.add)
	testwait.For(t, 30*time.Second, "every message", func() bool { return got.len() == len(want)+1 })
	for body, tag := range want {
		m := got.get(body)
		if m == nil {
			t.Errorf("missing %s", body)
			continue
		}
		if m.GetTags() != tag || m.GetKeys() != "key-"+body {
			t.Errorf("%s: tags %q keys %q", body, m.GetTags(), m.GetKeys())
		}
	}
	if m := got.get(string(big)); m == nil || m.GetTags() != "BIG" {
		t.Errorf("1 MiB body not received intact")
	}
}

// TestSendRejections checks that bad sends through the official producer
// fail with the broker's code and remark.
func TestSendRejections(t *testing.T) {
	c := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.MaxMessageSize = 64 << 10 }))
	createTopic(t, c, 0, "Limits", 2)
	p := newProducer(t, c, withNoRetry())
	ctx := context.Background()

	body := make([]byte, 100<<10) // random, so compression cannot shrink it
	for i := range body {
		body[i] = byte(rand.Uint32())
	}
	_, err := p.SendSync(ctx, primitive.NewMessage("Limits", body))
	if err == nil || !strings.Contains(err.Error(), "CODE: 13") || !strings.Contains(err.Error(), "msg body length limit") {
		t.Errorf("100 KiB body over a 64 KiB limit: err %v, want CODE: 13 with the body limit", err)
	}
	// The official producer checks nothing of a topic name itself: it asks
	// the name server for a route, falls back to TBW102's route for an
	// unknown topic, and sends; the broker's refusal comes back as
	// "CODE: <code>, DESC: <remark>".
	for _, tc := range []struct {
		name, topic string
		code        int16
		remark      string
	}{
		{"illegal characters", "bad topic!", protocol.RespSystemError, "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"128 characters", strings.Repeat("t", 128), protocol.RespSystemError, "The specified topic is longer than topic max length"},
		{"the auto-create template", "TBW102", protocol.RespSystemError, "the topic[TBW102] is conflict with system reserved words."},
		{"a system topic", "SCHEDULE_TOPIC_XXXX", protocol.RespNoPermission, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."},
		{"another system topic", "SELF_TEST_TOPIC", protocol.RespNoPermission, "Sending message to topic[SELF_TEST_TOPIC] is forbidden."},
	} {
		_, err := p.SendSync(ctx, primitive.NewMessage(tc.topic, []byte("x")))
		checkBrokerErr(t, tc.name, err, tc.code, tc.remark)
	}

	// A queue id beyond the topic's queues, through a selector that picks
	// one the route does not have.
	bad := newProducer(t, c, withNoRetry(), producer.WithQueueSelector(fixedQueue(99)))
	_, err = bad.SendSync(ctx, primitive.NewMessage("Limits", []byte("x")))
	checkBrokerErr(t, "queue id 99 of 2", err, protocol.RespSystemError, "request queueId[99] is illegal")
}

// fixedQueue is a queue selector that always picks queue id on the first
// broker of the route, whether or not the topic has that queue.
type fixedQueue int

func (q fixedQueue) Select(m *primitive.Message, mqs []*primitive.MessageQueue, _ string) *primitive.MessageQueue {
	return &primitive.MessageQueue{Topic: m.Topic, BrokerName: mqs[0].BrokerName, QueueId: int(q)}
}
