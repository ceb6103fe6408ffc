package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestRunnelClientRetryToDLQ runs the retry path end to end under -race
// (the official client's consumers cannot run there): Runnel's own push
// consumer answers RECONSUME_LATER, the broker delays each send-back by
// level 3 + reconsumeTimes and, after MaxReconsumeTimes 2, moves the
// message to %DLQ%<group>.
func TestRunnelClientRetryToDLQ(t *testing.T) {
	c := rcCluster(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.MessageDelayLevel = shortDelaysRC }))
	createTopic(t, c, 0, "RcRetryT", 1)
	createTopic(t, c, 0, "%RETRY%rc-retry", 1) // see TestRetryLater
	p := rcProducer(t, c)
	if _, err := p.Send(context.Background(), &client.Message{Topic: "RcRetryT", Body: []byte("rc-poison")}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var times []int32
	rcConsumerWith(t, c, "rc-retry", "RcRetryT", "*", func(cfg *client.PushConsumerConfig) {
		cfg.MaxReconsumeTimes = 2
		cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				times = append(times, m.ReconsumeTimes)
			}
			return client.ConsumeRetryLater
		}
	})

	st := c.Broker(0).Store()
	testwait.For(t, 30*time.Second, "the message in %DLQ%rc-retry", func() bool { return st.MaxOffset("%DLQ%rc-retry", 0) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if len(times) != 3 || times[0] != 0 || times[1] != 1 || times[2] != 2 {
		t.Fatalf("reconsume times seen %v, want [0 1 2]", times)
	}
}

// shortDelaysRC: level n waits n*100 ms.
const shortDelaysRC = "100ms 200ms 300ms 400ms 500ms 600ms"

// TestProducerSendToRetryTopicKeepsDefaultMax: a plain producer send to a
// %RETRY% topic (what a client does when CONSUMER_SEND_MSG_BACK fails)
// carries no maxReconsumeTimes unless the sender set one, so the broker
// records the group's default (16), not 0.
func TestProducerSendToRetryTopicKeepsDefaultMax(t *testing.T) {
	c := rcCluster(t)
	createTopic(t, c, 0, "%RETRY%rc-plain", 1)
	p := rcProducer(t, c)
	res, err := p.Send(context.Background(), &client.Message{Topic: "%RETRY%rc-plain", Body: []byte("again")})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := c.Broker(0).Store().LookupMessageID(res.OffsetMsgID)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := message.DecodeMessages(rec)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("stored record: %d messages, %v", len(msgs), err)
	}
	if got := msgs[0].Property(protocol.PropertyMaxReconsumeTimes); got != "16" {
		t.Fatalf("stored MAX_RECONSUME_TIMES %q, want the default 16", got)
	}
}
