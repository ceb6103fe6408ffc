package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestBrokerRequestsRunningInfo: GET_CONSUMER_RUNNING_INFO,
// GET_CONSUMER_STATUS_FROM_CLIENT and CONSUME_MESSAGE_DIRECTLY, which the
// broker forwards to the client from the admin tools (here asked as they
// ask: GET_CONSUMER_RUNNING_INFO, INVOKE_BROKER_TO_GET_CONSUMER_STATUS and
// CONSUME_MESSAGE_DIRECTLY to the broker). What no broker forwards, a
// request naming another client id, goes to the client through the tap;
// RESET_CONSUMER_CLIENT_OFFSET is TestBrokerResetsConsumerOffset.
func TestBrokerRequestsRunningInfo(t *testing.T) {
	be := startRunnel(t, 1, nil)
	be.createTopic(t, "T", 2)
	p := be.producerOnNewTopic(t, "D", 1)
	produce(t, p, "T", 0, 40)
	cons, col := startCollecting(t, be.ns, "g", "T")
	testwait.For(t, testwait.Default, "40 consumed", func() bool { return col.distinct() == 40 })
	id := cons.cfg.Client.ClientID()
	ctx := context.Background()

	info := be.invoke(t, 0, protocol.NewRequest(protocol.ReqGetConsumerRunningInfo,
		protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: "g", ClientID: id}.Encode(), nil))
	if info.Code != protocol.RespSuccess {
		t.Fatalf("running info answer %v", info)
	}
	body := string(info.Body)
	for _, want := range []string{`"consumerGroup":"g"`, `"messageModel":"CLUSTERING"`, `{"brokerName":"broker-a","queueId":1,"topic":"T"}:{`, `"subString":"*"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("running info lacks %s:\n%s", want, body)
		}
	}
	var props struct {
		Properties map[string]string `json:"properties"`
	}
	// mqTable keys are fastjson objects, so only the prefix is JSON.
	if err := json.Unmarshal([]byte(body[:strings.Index(body, `,"subscriptionSet"`)]+"}"), &props); err != nil || props.Properties["consumeType"] != "CONSUME_PASSIVELY" {
		t.Fatalf("properties: %v %v", err, props)
	}
	wrong, err := be.taps[0].Invoke(ctx, id, protocol.NewRequest(protocol.ReqGetConsumerRunningInfo,
		protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: "g", ClientID: "someone@else"}.Encode(), nil))
	if err != nil || wrong.Code != protocol.RespSystemError {
		t.Fatalf("running info for another client id: %v %v", wrong, err)
	}

	// The listener sees a batch before the consumer commits its offset to
	// the in-memory table the status reports, so the status reaches 20/20
	// some time after the 40th message: poll the wire answer for it.
	table := `{{"brokerName":"broker-a","queueId":0,"topic":"T"}:20,{"brokerName":"broker-a","queueId":1,"topic":"T"}:20}`
	quoted, _ := json.Marshal(id)
	wantStatus := `{"messageQueueTable":{},"consumerTable":{` + string(quoted) + `:` + table + `}}`
	testwait.Until(t, testwait.Default, "consumer status at 20/20", func() error {
		status := be.invoke(t, 0, protocol.NewRequest(protocol.ReqInvokeBrokerToGetConsumerStatus, map[string]string{"topic": "T", "group": "g"}, nil))
		if status.Code != protocol.RespSuccess || string(status.Body) != wantStatus {
			return fmt.Errorf("status %v %s", status, status.Body)
		}
		return nil
	})
	// The client's own answer, as the broker got it.
	status, err := be.taps[0].Invoke(ctx, id, protocol.NewRequest(protocol.ReqGetConsumerStatusFromClient, map[string]string{"topic": "T", "group": "g"}, nil))
	if err != nil || status.Code != protocol.RespSuccess || string(status.Body) != `{"messageQueueTable":`+table+`}` {
		t.Fatalf("client's consumer status: %v %v", status, err)
	}

	direct, err := p.Send(ctx, &Message{Topic: "D", Body: []byte("direct")})
	if err != nil {
		t.Fatal(err)
	}
	answer := be.invoke(t, 0, protocol.NewRequest(protocol.ReqConsumeMessageDirectly,
		map[string]string{"consumerGroup": "g", "clientId": id, "msgId": direct.OffsetMsgID, "topic": "D"}, nil))
	if answer.Code != protocol.RespSuccess || !strings.Contains(string(answer.Body), `"consumeResult":0`) {
		t.Fatalf("consume directly: %v %s", answer, answer.Body)
	}
	testwait.For(t, testwait.Default, "direct message at the listener", func() bool { col.mu.Lock(); defer col.mu.Unlock(); return col.count["direct"] == 1 })
}

func TestPullConsumer(t *testing.T) {
	forBackends(t, 1, func(t *testing.T, be *backend) {
		p := be.producerOnNewTopic(t, "T", 1)
		ctx := context.Background()
		for i := range 10 {
			tag := []string{"A", "B"}[i%2]
			if _, err := p.Send(ctx, &Message{Topic: "T", Tags: tag, Body: []byte(fmt.Sprint(i))}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
		mark := time.Now()
		time.Sleep(20 * time.Millisecond)
		if _, err := p.Send(ctx, &Message{Topic: "T", Tags: "A", Body: []byte("10")}); err != nil {
			t.Fatal(err)
		}
		pc := startPullConsumer(t, be, "pull-g")
		mqs, err := pc.MessageQueues(ctx, "T")
		if err != nil || len(mqs) != 1 {
			t.Fatalf("queues %v %v", mqs, err)
		}
		mq := mqs[0]
		res, err := pc.Pull(ctx, mq, 0, 4, PullOptions{})
		if err != nil || res.Status != PullFound || len(res.Messages) != 4 || res.NextOffset != 4 || string(res.Messages[3].Body) != "3" {
			t.Fatalf("pull 0..4: %+v %v", res, err)
		}
		res, err = pc.Pull(ctx, mq, 4, 32, PullOptions{Expression: "A"})
		if err != nil || res.Status != PullFound {
			t.Fatalf("pull A: %+v %v", res, err)
		}
		for _, m := range res.Messages {
			if m.Tags() != "A" {
				t.Fatalf("expression A returned tag %q", m.Tags())
			}
		}
		if res, err = pc.Pull(ctx, mq, 11, 32, PullOptions{}); err != nil || res.Status != PullNoNewMessage {
			t.Fatalf("pull at the end: %+v %v", res, err)
		}
		start := time.Now()
		if res, err = pc.Pull(ctx, mq, 11, 32, PullOptions{Wait: 300 * time.Millisecond}); err != nil || res.Status != PullNoNewMessage || time.Since(start) < 200*time.Millisecond {
			t.Fatalf("long-polled pull at the end: %+v %v after %v", res, err, time.Since(start))
		}
		if max, err := pc.MaxOffset(ctx, mq); err != nil || max != 11 {
			t.Fatalf("max offset %d %v", max, err)
		}
		if min, err := pc.MinOffset(ctx, mq); err != nil || min != 0 {
			t.Fatalf("min offset %d %v", min, err)
		}
		if off, err := pc.OffsetForTimestamp(ctx, mq, mark); err != nil || off != 10 {
			t.Fatalf("offset for timestamp %d %v, want 10", off, err)
		}
		// A Java-like broker answers 0 for a young queue (fact sheet §2.3.4).
		if off, err := pc.CommittedOffset(ctx, mq); err != nil || off != 0 {
			t.Fatalf("committed offset of a new group: %d %v", off, err)
		}
		if err := pc.CommitOffset(ctx, mq, 7); err != nil {
			t.Fatal(err)
		}
		if off, err := pc.CommittedOffset(ctx, mq); err != nil || off != 7 {
			t.Fatalf("committed offset %d %v, want 7", off, err)
		}
	})
}

func TestProducerAndConsumerShareOneInstance(t *testing.T) {
	be := startRunnel(t, 1, nil)
	be.createTopic(t, "T", 1)
	cc := testClient(be.ns)
	p := startProducer(t, be.ns, func(cfg *ProducerConfig) { cfg.Client, cfg.Group = cc, "shared-pg" })
	ctx := context.Background()
	col := newCollector()
	cons := newConsumer(t, be.ns, "shared-g", func(cfg *PushConsumerConfig) {
		cfg.Client = cc
		cfg.Concurrently = col.listener()
	})
	startConsumer(t, cons, "T", "*")
	p.mu.Lock()
	pi := p.mu.inst
	p.mu.Unlock()
	cons.mu.Lock()
	ci := cons.mu.inst
	cons.mu.Unlock()
	if pi != ci {
		t.Fatal("producer and consumer with one client id run two instances")
	}
	if got := be.broker(0).ConsumerIDs("shared-g"); len(got) != 1 || got[0] != cc.ClientID() {
		t.Fatalf("broker sees clients %v", got)
	}
	// A second consumer of the same group in the same instance is refused.
	dup := newConsumer(t, be.ns, "shared-g", func(cfg *PushConsumerConfig) {
		cfg.Client = cc
		cfg.Concurrently = col.listener()
	})
	_ = dup.Subscribe("T", "*")
	if err := dup.Start(ctx); err == nil || !strings.Contains(err.Error(), "InstanceName") {
		t.Fatalf("duplicate group in one instance: %v", err)
	}
	produce(t, p, "T", 0, 5)
	testwait.For(t, testwait.Default, "5 messages", func() bool { return col.distinct() == 5 })
}

func TestSendBackFallsBackToRetryTopic(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := be.producerOnNewTopic(t, "T", 1)
	var mu sync.Mutex
	var times []int32
	var origin string
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.Concurrently = func(_ context.Context, msgs []*MessageExt) ConsumeResult {
			mu.Lock()
			defer mu.Unlock()
			times = append(times, msgs[0].ReconsumeTimes)
			if msgs[0].ReconsumeTimes == 0 {
				return ConsumeRetryLater
			}
			origin = msgs[0].Property(protocol.PropertyOriginMessageID) + " " + msgs[0].Topic
			return ConsumeSuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	be.taps[0].Refuse(brokertap.Code(protocol.ReqConsumerSendMsgBack), 1, protocol.RespSystemError, "injected send-back failure")
	res, err := p.Send(context.Background(), &Message{Topic: "T", Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, testwait.Default, "redelivery through the fallback", func() bool { mu.Lock(); defer mu.Unlock(); return len(times) == 2 })
	mu.Lock()
	defer mu.Unlock()
	if times[1] != 1 || origin != res.MsgID+" T" {
		t.Fatalf("redelivered with reconsumeTimes %d, origin/topic %q (want 1, %q)", times[1], origin, res.MsgID+" T")
	}
	if n := len(be.stored(t, 0, "%RETRY%g", 0)); n != 1 {
		t.Fatalf("%d messages in the retry topic", n)
	}
	if n := be.taps[0].Count(brokertap.SendTo("%RETRY%g")); n != 1 {
		t.Fatalf("%d sends to the retry topic, want the one fallback", n)
	}
}

func TestOrderlyGivesUpToDLQAfterMaxReconsume(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := be.producerOnNewTopic(t, "T", 1)
	var calls atomic.Int32
	next := make(chan string, 10)
	cons := newConsumer(t, be.ns, "og", func(cfg *PushConsumerConfig) {
		cfg.MaxReconsumeTimes = 2
		cfg.SuspendCurrentQueueTime = 10 * time.Millisecond
		cfg.Orderly = func(_ context.Context, msgs []*MessageExt) OrderlyResult {
			if string(msgs[0].Body) == "poison" {
				calls.Add(1)
				return OrderlySuspend
			}
			next <- string(msgs[0].Body)
			return OrderlySuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	for _, b := range []string{"poison", "after"} {
		if _, err := p.Send(context.Background(), &Message{Topic: "T", Body: []byte(b)}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-next:
		if got != "after" {
			t.Fatalf("got %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("queue stuck behind the poison message")
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("poison message consumed %d times, want 1 + MaxReconsumeTimes 2", n)
	}
	dlq := be.stored(t, 0, "%DLQ%og", 0)
	if len(dlq) != 1 || string(dlq[0].Body) != "poison" {
		t.Fatalf("DLQ holds %v", dlq)
	}
}

func TestOrderlyRebalanceHandsLocksOver(t *testing.T) {
	be := startRunnel(t, 1, nil) // lock lease 60 s: only an UNLOCK frees a queue in time
	be.createTopic(t, "T", 4)
	noop := func(context.Context, []*MessageExt) OrderlyResult { return OrderlySuccess }
	a := newConsumer(t, be.ns, "og", func(cfg *PushConsumerConfig) { cfg.Orderly = noop })
	startConsumer(t, a, "T", "*")
	testwait.For(t, testwait.Default, "a holds 4", func() bool { return countTopic(a.Assigned(), "T") == 4 })
	b := newConsumer(t, be.ns, "og", func(cfg *PushConsumerConfig) { cfg.Orderly = noop })
	startConsumer(t, b, "T", "*")
	testwait.For(t, testwait.Default, "locks split 2/2", func() bool {
		return countTopic(a.Assigned(), "T") == 2 && countTopic(b.Assigned(), "T") == 2
	})
	for _, mq := range b.Assigned() {
		if mq.Topic != "T" {
			continue
		}
		if h, _ := be.broker(0).LockOwner("og", mq); h != b.cfg.Client.ClientID() {
			t.Fatalf("%v held by %q", mq, h)
		}
	}
}

func TestShutdownLeavesNoGoroutine(t *testing.T) {
	be := startRunnel(t, 1, nil)
	be.createTopic(t, "T", 2)
	// The broker keeps running: its server's workers park for the next
	// request. The client runs no remoting.Server, hence no worker pool, so
	// ignoring parked workers ignores nothing of the client's.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("github.com/runnelmq/runnel/remoting.(*workerPool).work"))
	ctx := context.Background()
	pcfg := DefaultProducerConfig()
	pcfg.Client = testClient(be.ns)
	p, err := NewProducer(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	_ = p.SendAsync(ctx, func(SendResult, error) { close(done) }, &Message{Topic: "T", Body: []byte("x")})
	for _, orderly := range []bool{false, true} {
		col := newCollector()
		cfg := DefaultPushConsumerConfig()
		cfg.Client = testClient(be.ns)
		cfg.Group = fmt.Sprintf("leak-%v", orderly)
		cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
		if orderly {
			cfg.Orderly = func(_ context.Context, m []*MessageExt) OrderlyResult { col.add(m); return OrderlySuccess }
		} else {
			cfg.Concurrently = col.listener()
		}
		cons, err := NewPushConsumer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_ = cons.Subscribe("T", "*")
		if err := cons.Start(ctx); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, testwait.Default, "the message", func() bool { return col.distinct() == 1 })
		if err := cons.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStartFailsForTopicWithoutRoute(t *testing.T) {
	be := startRunnel(t, 1, nil)
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) { cfg.Concurrently = newCollector().listener() })
	_ = cons.Subscribe("Missing", "*")
	err := cons.Start(context.Background())
	if !errors.Is(err, ErrTopicNotExist) || !strings.Contains(err.Error(), "route of subscribed topic Missing") {
		t.Fatalf("Start = %v", err)
	}
	var bErr *BrokerError
	if !errors.As(err, &bErr) || bErr.Broker != "name server" || bErr.Addr != be.ns {
		t.Fatalf("error does not say where: %v", err)
	}
	if err := cons.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestConsumeTimeoutSendsStuckMessagesBack(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := be.producerOnNewTopic(t, "T", 1)
	sendBacks := func() int { return be.taps[0].Count(brokertap.Code(protocol.ReqConsumerSendMsgBack)) }
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	stuck := make(chan struct{})
	entered := make(chan struct{}, 1)
	var redelivered atomic.Int32
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) {
		cfg.ConsumeTimeout = time.Hour // the loop never fires; the test calls expireSlow
		cfg.Now = clock
		cfg.Concurrently = func(ctx context.Context, msgs []*MessageExt) ConsumeResult {
			if msgs[0].ReconsumeTimes > 0 {
				redelivered.Add(1)
				return ConsumeSuccess
			}
			entered <- struct{}{}
			select { // the first delivery hangs
			case <-stuck:
			case <-ctx.Done():
			}
			return ConsumeSuccess
		}
	})
	startConsumer(t, cons, "T", "*")
	defer close(stuck)
	if _, err := p.Send(context.Background(), &Message{Topic: "T", Body: []byte("slow")}); err != nil {
		t.Fatal(err)
	}
	mq := queue.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	// The message sits in the process queue before the listener call
	// starts; only a started call can time out.
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the listener was never called")
	}
	if n := cons.QueueStats()[mq].Count; n != 1 {
		t.Fatalf("process queue holds %d, want 1", n)
	}
	cons.expireSlow() // not yet expired
	if sendBacks() != 0 {
		t.Fatal("sent back before the timeout")
	}
	mu.Lock()
	now = now.Add(time.Hour + time.Second)
	mu.Unlock()
	cons.expireSlow()
	if n := sendBacks(); n != 1 {
		t.Fatalf("%d send-backs after the timeout, want 1", n)
	}
	if s := cons.QueueStats()[mq]; s.Count != 0 {
		t.Fatalf("process queue still holds %d", s.Count)
	}
	testwait.For(t, testwait.Default, "redelivery through the retry topic", func() bool { return redelivered.Load() == 1 })
	cons.persistAll(context.Background())
	testwait.For(t, testwait.Default, "offset past the stuck message", func() bool { return be.brokerOffset(0, "g", "T", 0) == 1 })
}
