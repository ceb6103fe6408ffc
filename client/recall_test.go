package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestProducerRecall: against two Runnel brokers, a timer message
// recalled before it falls due, by a producer that did not send it and
// knows no route yet, never reaches a consumer, while the siblings due
// with it on the same brokers do; each recall goes to the broker its
// handle names, and answers the message's id. Afterwards a malformed
// handle fails without a request, and the brokers refuse, with their code
// and remark, a handle of a broker they are not, of another topic, and
// one whose message was delivered. The brokers' clock is fake and their
// timers are stepped by hand, so "before it falls due" holds on any
// machine.
func TestProducerRecall(t *testing.T) {
	clock := fakeclock.New(time.Now())
	be := startRunnel(t, 2, func(_ int, cfg *config.Config) { cfg.Now = clock.Now })
	p := be.producerOnNewTopic(t, "R", 1)
	ctx := context.Background()
	byBroker := map[string][]SendResult{}
	body := map[string]string{} // MsgID -> body
	for i := range 4 {
		b := fmt.Sprintf("m%d", i)
		res, err := p.Send(ctx, &Message{Topic: "R", Body: []byte(b), DeliverAfter: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.RecallHandle == "" {
			t.Fatalf("the send of a timer message was answered without a recall handle: %+v", res)
		}
		byBroker[res.Queue.BrokerName] = append(byBroker[res.Queue.BrokerName], res)
		body[res.MsgID] = b
	}
	if len(byBroker) != 2 {
		t.Fatalf("4 sends over 2 brokers' queues went to %d of them", len(byBroker))
	}
	plain, err := p.Send(ctx, &Message{Topic: "R", Body: []byte("now")})
	if err != nil || plain.RecallHandle != "" {
		t.Fatalf("a message that is not a timer's: %+v %v, want no recall handle", plain, err)
	}

	other := startProducer(t, be.ns, nil)
	recalled, kept := map[string]bool{}, map[string]bool{"now": true}
	var delivered SendResult
	for broker, rs := range byBroker {
		id, err := other.Recall(ctx, "R", rs[0].RecallHandle)
		if err != nil || id != rs[0].MsgID {
			t.Fatalf("recall of %s's first: %q, %v; want %s", broker, id, err, rs[0].MsgID)
		}
		recalled[body[rs[0].MsgID]] = true
		kept[body[rs[1].MsgID]] = true
		delivered = rs[1]
		if n := be.taps[be.brokerIndex(t, broker)].Count(brokertap.Code(protocol.ReqRecallMessage)); n != 1 {
			t.Fatalf("broker %s was asked to recall %d times, want once (its own message)", broker, n)
		}
	}

	c, col := startCollecting(t, be.ns, "recall-g", "R")
	clock.Advance(10 * time.Second)
	for i := range be.brokers {
		if _, err := be.broker(i).Core().Due().Step(); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, testwait.Default, "the messages not recalled", func() bool {
		for b := range kept {
			if col.count1(b) == 0 {
				return false
			}
		}
		return true
	})
	be.waitAtEnd(t, "R", c)
	for b := range kept {
		if col.count1(b) != 1 {
			t.Errorf("%s delivered %d times, want once", b, col.count1(b))
		}
	}
	for b := range recalled {
		if col.count1(b) != 0 {
			t.Errorf("the recalled %s was delivered", b)
		}
	}

	asked := func() (n int) {
		for _, tap := range be.taps {
			n += tap.Count(brokertap.Code(protocol.ReqRecallMessage))
		}
		return n
	}
	before := asked()
	if _, err := other.Recall(ctx, "R", "not-a-handle"); !errors.Is(err, ErrBadRecallHandle) {
		t.Errorf("malformed handle: %v, want ErrBadRecallHandle", err)
	}
	if asked() != before {
		t.Error("a malformed handle was sent to a broker")
	}
	due := clock.Now().Add(time.Minute).UnixMilli()
	for name, tc := range map[string]struct{ handle, remark string }{
		"another broker's": {message.RecallHandle{Topic: "R", Broker: "broker-z", Due: due, UniqKey: "K"}.Encode(), "the handle is of broker broker-z"},
		"another topic's":  {message.RecallHandle{Topic: "Other", Broker: delivered.Queue.BrokerName, Due: due, UniqKey: "K"}.Encode(), "topic not match"},
		"delivered":        {delivered.RecallHandle, "timestamp invalid"},
	} {
		_, err := other.Recall(ctx, "R", tc.handle)
		var berr *BrokerError
		if !errors.As(err, &berr) || berr.Code != protocol.RespIllegalOperation || !strings.Contains(berr.Remark, tc.remark) || berr.Op != "recall" {
			t.Errorf("recall of %s handle: %v, want the broker's ILLEGAL_OPERATION %q", name, err, tc.remark)
		}
	}
	if _, err := other.Recall(ctx, "NoSuchTopic", delivered.RecallHandle); !errors.Is(err, ErrTopicNotExist) {
		t.Errorf("recall on an unknown topic: %v, want ErrTopicNotExist", err)
	}
}

func TestProducerRecallNotStarted(t *testing.T) {
	p, err := NewProducer(ProducerConfig{Client: ClientConfig{NameServerAddrs: []string{"127.0.0.1:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Recall(context.Background(), "R", "x"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Recall before Start: %v", err)
	}
}
