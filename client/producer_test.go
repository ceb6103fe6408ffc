package client

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestProducerSendPropertiesAndAutoCreate(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := startProducer(t, be.ns, nil)
	ctx := context.Background()
	res, err := p.Send(ctx, &Message{Topic: "NewTopic", Body: []byte("hello"), Tags: "TagA",
		Keys: []string{"k1", "k2"}, Properties: map[string]string{"color": "red"}, Flag: 7})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := be.broker(0).Core().Topic("NewTopic"); !ok || tc.WriteQueueNums != 4 || tc.ReadQueueNums != 4 {
		t.Fatalf("auto-created topic %+v %v, want DefaultTopicQueueNums 4", tc, ok)
	}
	msgs := be.stored(t, 0, "NewTopic", res.Queue.QueueID)
	if len(msgs) != 1 {
		t.Fatalf("queue %d holds %d messages", res.Queue.QueueID, len(msgs))
	}
	m := msgs[0]
	if string(m.Body) != "hello" || m.Tags() != "TagA" || m.Property("KEYS") != "k1 k2" || m.Property("color") != "red" || m.Flag != 7 {
		t.Fatalf("stored message %+v", m)
	}
	if m.UniqKey() == "" || m.UniqKey() != res.MsgID {
		t.Fatalf("UNIQ_KEY %q, SendResult.MsgID %q", m.UniqKey(), res.MsgID)
	}
	if res.OffsetMsgID != m.OffsetMsgID || res.QueueOffset != 0 || res.Status != SendOK {
		t.Fatalf("result %+v, stored offsetMsgId %s", res, m.OffsetMsgID)
	}
}

func TestProducerRoundRobinAndBatch(t *testing.T) {
	be := startRunnel(t, 2, nil)
	p := be.producerOnNewTopic(t, "T", 2)
	ctx := context.Background()
	seen := map[queue.MessageQueue]int{}
	for range 8 {
		res, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		seen[res.Queue]++
	}
	if len(seen) != 4 {
		t.Fatalf("round robin over 4 queues used %v", seen)
	}
	for mq, n := range seen {
		if n != 2 {
			t.Fatalf("queue %v got %d of 8", mq, n)
		}
	}
	batch := []*Message{{Topic: "T", Body: []byte("b1"), Tags: "A"}, {Topic: "T", Body: []byte("b2"), Tags: "B"}, {Topic: "T", Body: []byte("b3")}}
	res, err := p.Send(ctx, batch...)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Split(res.MsgID, ",")
	if len(ids) != 3 {
		t.Fatalf("batch MsgID %q", res.MsgID)
	}
	stored := be.stored(t, be.brokerIndex(t, res.Queue.BrokerName), "T", res.Queue.QueueID)
	tail := stored[len(stored)-3:]
	for i, m := range tail {
		if string(m.Body) != string(batch[i].Body) || m.Tags() != batch[i].Tags || m.UniqKey() != ids[i] {
			t.Fatalf("batch message %d stored as %+v", i, m)
		}
		if m.QueueOffset != res.QueueOffset+int64(i) {
			t.Fatalf("batch message %d at offset %d, first %d", i, m.QueueOffset, res.QueueOffset)
		}
	}
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("x")}, &Message{Topic: "U", Body: []byte("y")}); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("mixed-topic batch: %v", err)
	}
}

func TestProducerRetriesOnAnotherBroker(t *testing.T) {
	be := startRunnel(t, 2, nil)
	p := be.producerOnNewTopic(t, "T", 1)
	ctx := context.Background()
	refuse := func(codes ...int16) {
		for _, tap := range be.taps {
			tap.Clear()
			for _, code := range codes {
				tap.Refuse(brokertap.Sends, 1, code, "injected failure")
			}
		}
	}
	sends := func() (n int) {
		for _, tap := range be.taps {
			n += tap.Count(brokertap.Sends)
		}
		return n
	}
	refuse(protocol.RespSystemError)
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("x")}); err != nil {
		t.Fatalf("send with one failure per broker: %v", err)
	}
	if got := sends(); got != 3 {
		t.Fatalf("%d send attempts, want 3 (fail a, fail b, succeed)", got)
	}
	if n := len(be.stored(t, 0, "T", 0)) + len(be.stored(t, 1, "T", 0)); n != 1 {
		t.Fatalf("%d messages stored, want the one that got through", n)
	}
	// Not retryable: SYSTEM_BUSY fails at once and names the broker.
	refuse(protocol.RespSystemBusy)
	before := sends()
	_, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("x")})
	var bErr *BrokerError
	if !errors.As(err, &bErr) || bErr.Code != protocol.RespSystemBusy || !strings.Contains(err.Error(), "client: send to broker-") || !strings.Contains(err.Error(), "CODE 2 SYSTEM_BUSY: injected failure") {
		t.Fatalf("SYSTEM_BUSY error = %v", err)
	}
	if n := sends() - before; n != 1 {
		t.Fatalf("SYSTEM_BUSY: %d attempts, want 1", n)
	}
	// Attempts are bounded: 1 + RetryTimes.
	refuse(protocol.RespSystemError, protocol.RespSystemError)
	before = sends()
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("x")}); err == nil {
		t.Fatal("send succeeded although every attempt failed")
	}
	if n, want := sends()-before, 1+DefaultProducerConfig().RetryTimes; n != want {
		t.Fatalf("%d attempts, want 1 + RetryTimes = %d", n, want)
	}
}

func TestProducerCompressionAsyncOneway(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := be.producerOnNewTopic(t, "T", 1)
	ctx := context.Background()
	big := bytes.Repeat([]byte("abcdefgh"), 1024) // 8 KiB
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: big}); err != nil {
		t.Fatal(err)
	}
	small := []byte("small")
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: small}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var asyncErr error
	if err := p.SendAsync(ctx, func(_ SendResult, err error) { asyncErr = err; wg.Done() }, &Message{Topic: "T", Body: []byte("async")}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if asyncErr != nil {
		t.Fatal(asyncErr)
	}
	if err := p.SendOneway(ctx, &Message{Topic: "T", Body: []byte("oneway")}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, testwait.Default, "oneway message stored", func() bool { return len(be.stored(t, 0, "T", 0)) == 4 })
	msgs := be.stored(t, 0, "T", 0)
	if msgs[0].SysFlag&protocol.SysFlagCompressed == 0 || len(msgs[0].Body) >= len(big) {
		t.Fatalf("8 KiB body not compressed: sysFlag %#x, %d bytes", msgs[0].SysFlag, len(msgs[0].Body))
	}
	plain, err := message.Decompress(msgs[0].Body, 0)
	if err != nil || !bytes.Equal(plain, big) {
		t.Fatalf("compressed body does not inflate to the original: %v", err)
	}
	if msgs[1].SysFlag&protocol.SysFlagCompressed != 0 || !bytes.Equal(msgs[1].Body, small) {
		t.Fatal("small body was compressed")
	}
	if string(msgs[2].Body) != "async" || string(msgs[3].Body) != "oneway" {
		t.Fatalf("async/oneway bodies %q %q", msgs[2].Body, msgs[3].Body)
	}
}

func TestProducerErrors(t *testing.T) {
	be := startRunnel(t, 1, func(_ int, cfg *config.Config) { cfg.AutoCreateTopicEnable = false })
	p := startProducer(t, be.ns, nil)
	ctx := context.Background()
	if _, err := p.Send(ctx, &Message{Topic: "Missing", Body: []byte("x")}); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("send to a missing topic without TBW102: %v", err)
	}
	for _, m := range []*Message{{Topic: "", Body: []byte("x")}, {Topic: "bad topic", Body: []byte("x")}, {Topic: "T"}} {
		if _, err := p.Send(ctx, m); !errors.Is(err, ErrBadMessage) {
			t.Fatalf("Send(%+v) = %v, want ErrBadMessage", m, err)
		}
	}
	if _, err := NewProducer(ProducerConfig{}); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("no name server: %v", err)
	}
	q, _ := NewProducer(func() ProducerConfig {
		c := DefaultProducerConfig()
		c.Client.NameServerAddrs = []string{"127.0.0.1:1"}
		return c
	}())
	if _, err := q.Send(ctx, &Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("send before start: %v", err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after shutdown: %v", err)
	}
}

func TestHashSelectorKeepsKeysTogether(t *testing.T) {
	mqs := []queue.MessageQueue{{Topic: "T", BrokerName: "a", QueueID: 0}, {Topic: "T", BrokerName: "a", QueueID: 1}, {Topic: "T", BrokerName: "b", QueueID: 0}}
	var s HashSelector
	first := map[string]queue.MessageQueue{}
	used := map[queue.MessageQueue]bool{}
	for i := range 300 {
		key := string(rune('a' + i%26))
		mq := s.Select(&Message{ShardingKey: key}, mqs, "a")
		if prev, ok := first[key]; ok && prev != mq {
			t.Fatalf("key %s moved from %v to %v", key, prev, mq)
		}
		first[key] = mq
		used[mq] = true
	}
	if len(used) != 3 {
		t.Fatalf("26 keys used only %d of 3 queues", len(used))
	}
}

// TestProducerDelayLevel: a message sent with delay level 3 is stored in
// its topic when level 3's delay has passed on the broker's clock, not
// before. The broker's clock is fake and the schedule is stepped by hand,
// so "not yet" is a delivery pass that delivered nothing.
func TestProducerDelayLevel(t *testing.T) {
	clock := fakeclock.New(time.Now())
	be := startRunnel(t, 1, func(_ int, cfg *config.Config) {
		cfg.Now = clock.Now
		cfg.MessageDelayLevel = "1s 2s 3s 4s"
	})
	p := be.producerOnNewTopic(t, "T", 1)
	if _, err := p.Send(context.Background(), &Message{Topic: "T", Body: []byte("later"), DelayLevel: 3}); err != nil {
		t.Fatal(err)
	}
	step := func() []*protocol.MessageExt {
		t.Helper()
		if _, err := be.broker(0).Core().Due().Step(); err != nil {
			t.Fatal(err)
		}
		return be.stored(t, 0, "T", 0)
	}
	if got := step(); len(got) != 0 {
		t.Fatalf("delayed message visible at once (%d)", len(got))
	}
	clock.Advance(3*time.Second - time.Millisecond)
	if got := step(); len(got) != 0 {
		t.Fatal("level 3 delivered before its 3 s")
	}
	clock.Advance(time.Millisecond)
	if got := step(); len(got) != 1 || string(got[0].Body) != "later" {
		t.Fatalf("after 3 s the topic holds %v, want the delayed message", got)
	}
	if _, err := p.Send(context.Background(), &Message{Topic: "T", Body: []byte("x"), DelayLevel: 1}, &Message{Topic: "T", Body: []byte("y")}); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("delayed message in a batch: %v", err)
	}
}

func TestProducerAutoCreatesTopicThroughTBW102(t *testing.T) {
	forBackends(t, 1, func(t *testing.T, be *backend) {
		p := startProducer(t, be.ns, nil)
		ctx := context.Background()
		res, err := p.Send(ctx, &Message{Topic: "Fresh", Tags: "A", Body: []byte("first")})
		if err != nil {
			t.Fatal(err)
		}
		pc := startPullConsumer(t, be, "g")
		var mqs []queue.MessageQueue
		testwait.For(t, testwait.Default, "route of the new topic", func() bool {
			mqs, err = pc.MessageQueues(ctx, "Fresh")
			return err == nil && len(mqs) > 0
		})
		if len(mqs) != 4 {
			t.Fatalf("auto-created topic has %d queues, want DefaultTopicQueueNums 4", len(mqs))
		}
		pr, err := pc.Pull(ctx, res.Queue, res.QueueOffset, 1, PullOptions{})
		if err != nil || len(pr.Messages) != 1 {
			t.Fatalf("pull back: %+v %v", pr, err)
		}
		m := pr.Messages[0]
		if string(m.Body) != "first" || m.Tags() != "A" || m.MsgID != res.MsgID || m.OffsetMsgID != res.OffsetMsgID {
			t.Fatalf("pulled %+v for send result %+v", m, res)
		}
	})
}
