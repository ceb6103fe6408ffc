package client

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestFailedSendBackConsumedAgainLocally: when a failed message can go
// back neither by CONSUMER_SEND_MSG_BACK nor by the fallback send to the
// retry topic, it stays in the process queue, holding the committed offset
// below it, and is consumed again locally after RetryLocalDelay with its
// reconsume count raised (RocketMQ's submitConsumeRequestLater).
func TestFailedSendBackConsumedAgainLocally(t *testing.T) {
	be := startRunnel(t, 1, nil)
	be.createTopic(t, "T", 1)
	tap := be.taps[0]
	p := startProducer(t, be.ns, nil)
	release := make(chan struct{})
	second := make(chan *MessageExt, 1)
	var afterConsumed atomic.Bool
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.RetryLocalDelay = 20 * time.Millisecond
		cfg.Concurrently = func(ctx context.Context, msgs []*MessageExt) ConsumeResult {
			m := msgs[0]
			switch {
			case string(m.Body) == "after":
				afterConsumed.Store(true)
				return ConsumeSuccess
			case m.ReconsumeTimes == 0:
				return ConsumeRetryLater
			}
			second <- m
			select { // hold the redelivery while the test looks at the offset
			case <-release:
			case <-ctx.Done():
			}
			return ConsumeSuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	tap.Refuse(brokertap.Code(protocol.ReqConsumerSendMsgBack), 1, protocol.RespSystemError, "injected send-back failure")
	tap.Refuse(brokertap.SendTo("%RETRY%g"), 1, protocol.RespSystemError, "injected failure of a send to %RETRY%g")
	ctx := context.Background()
	first, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("fails")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	var m *MessageExt
	select {
	case m = <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("the failed message never came back")
	}
	if m.ReconsumeTimes != 1 || m.MsgID != first.MsgID || m.Queue.Topic != "T" || m.QueueOffset != 0 {
		t.Fatalf("came back as %s reconsumeTimes %d from %v@%d; want the original %s, reconsumeTimes 1, from T@0",
			m.MsgID, m.ReconsumeTimes, m.Queue, m.QueueOffset, first.MsgID)
	}
	if n := len(be.stored(t, 0, "%RETRY%g", 0)); n != 0 {
		t.Fatalf("%d messages in the retry topic; the redelivery should be local", n)
	}
	if sb, sends := tap.Count(brokertap.Code(protocol.ReqConsumerSendMsgBack)), tap.Count(brokertap.Sends); sb != 1 || sends != 3 {
		t.Fatalf("%d send-backs and %d sends, want 1 and 3 (two messages and the failed fallback)", sb, sends)
	}
	// "after" (offset 1) is done, but the offset must wait for "fails".
	testwait.For(t, testwait.Default, "the later message consumed", afterConsumed.Load)
	mq := queue.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	_, store, _ := cons.state()
	if err := store.persistSync(ctx, []queue.MessageQueue{mq}); err != nil {
		t.Fatal(err)
	}
	if off, _ := store.Read(ctx, mq, offset.ReadFromMemory); off != 0 || be.brokerOffset(0, "g", "T", 0) > 0 {
		t.Fatalf("offset moved past a message still to be consumed: memory %d, broker %d", off, be.brokerOffset(0, "g", "T", 0))
	}
	close(release)
	testwait.For(t, testwait.Default, "offset past both once the redelivery succeeded", func() bool { return be.brokerOffset(0, "g", "T", 0) == 2 })
}

// TestConcurrentBatchSizeAndGoroutines: ConsumeBatchSize caps the messages
// of one listener call, and ConsumeGoroutines the calls in flight.
func TestConcurrentBatchSizeAndGoroutines(t *testing.T) {
	forBackends(t, 1, testConcurrentBatchSizeAndGoroutines)
}

func testConcurrentBatchSizeAndGoroutines(t *testing.T, be *backend) {
	const n, batch, workers = 40, 4, 2
	p := be.producerOnNewTopic(t, "T", 1)
	produce(t, p, "T", 0, n) // a backlog: one pull brings 32
	be.waitMaxOffsets(t, "T", n)
	var (
		mu                    sync.Mutex
		inFlight, maxInFlight int
		calls, biggest, seen  int
		release               = make(chan struct{})
		released              atomic.Bool
	)
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.ConsumeBatchSize = batch
		cfg.ConsumeGoroutines = workers
		cfg.Concurrently = func(ctx context.Context, msgs []*MessageExt) ConsumeResult {
			mu.Lock()
			inFlight++
			calls++
			seen += len(msgs)
			maxInFlight = max(maxInFlight, inFlight)
			biggest = max(biggest, len(msgs))
			mu.Unlock()
			if !released.Load() {
				select { // the first calls hold their workers busy
				case <-release:
				case <-ctx.Done():
				}
			}
			mu.Lock()
			inFlight--
			mu.Unlock()
			return ConsumeSuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	testwait.For(t, testwait.Default, "the workers busy", func() bool { mu.Lock(); defer mu.Unlock(); return inFlight >= workers })
	// Every worker is held with batches waiting; listener calls run only
	// on the pool's goroutines, so its size is what bounds them: count
	// those goroutines rather than watch a while for a third call.
	if n := goroutinesIn("client.(*PushConsumer).consumeWorker("); n != workers {
		t.Fatalf("%d consume goroutines, want %d", n, workers)
	}
	released.Store(true)
	close(release)
	testwait.For(t, testwait.Default, "all consumed", func() bool { mu.Lock(); defer mu.Unlock(); return seen == n })
	mu.Lock()
	defer mu.Unlock()
	if maxInFlight > workers {
		t.Fatalf("%d listener calls in flight, ConsumeGoroutines is %d", maxInFlight, workers)
	}
	if biggest > batch || biggest < 2 {
		t.Fatalf("largest call had %d messages; want 2..%d from a backlog", biggest, batch)
	}
	if calls >= n {
		t.Fatalf("%d calls for %d backlogged messages: batches were not used", calls, n)
	}
}

// goroutinesIn counts the goroutines whose stack has a frame of fn (as
// runtime.Stack prints it).
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			count++
		}
	}
	return count
}
