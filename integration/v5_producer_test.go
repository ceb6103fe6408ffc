//go:build !race

// The RocketMQ 5 SDK races inside itself under -race (it applies the
// server's Settings on its Telemetry goroutine while its producer and
// consumers read them); scripts/test.sh runs this file in its second
// pass, without -race.

package integration

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestV5ProducerNormal: the official RocketMQ 5 Go SDK, with its
// defaults (TLS, not verified), sends to a topic its first use creates;
// every message is stored with its body, tag, keys and properties, under
// the message id the SDK gave it.
func TestV5ProducerNormal(t *testing.T) {
	c := startV5(t)
	topic := "V5Normal"
	p := newV5Producer(t, c, []string{topic})
	ids := map[string]int{}
	for i := range 10 {
		m := &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprintf("body-%d", i))}
		m.SetTag("TagA")
		m.SetKeys(fmt.Sprintf("key-%d", i))
		m.AddProperty("n", fmt.Sprint(i))
		r := v5Send(t, p, m)
		ids[r.MessageID] = i
	}
	if len(ids) != 10 {
		t.Fatalf("%d distinct message ids for 10 sends", len(ids))
	}
	got := readTopic(t, c, 0, topic)
	if len(got) != 10 {
		t.Fatalf("stored %d messages, want 10", len(got))
	}
	for _, m := range got {
		i, ok := ids[m.UniqKey()]
		if !ok {
			t.Fatalf("stored message %s was not sent", m.UniqKey())
		}
		if string(m.Body) != fmt.Sprintf("body-%d", i) || m.Tags() != "TagA" ||
			m.Property("KEYS") != fmt.Sprintf("key-%d", i) || m.Property("n") != fmt.Sprint(i) {
			t.Errorf("message %d stored as %q tag %q keys %q n %q", i, m.Body, m.Tags(), m.Property("KEYS"), m.Property("n"))
		}
	}
}

// TestV5ProducerFIFO: FIFO messages (a message group each) land on one
// queue per group, the queue the door picks by the group whatever queue
// the SDK chose, in the order they were sent.
func TestV5ProducerFIFO(t *testing.T) {
	c := startV5(t)
	topic := "V5FIFO"
	p := newV5Producer(t, c, []string{topic})
	groups := []string{"order-1", "order-2", "order-3", "order-4", "order-5"}
	for i := range 30 {
		m := &rmq5.Message{Topic: topic, Body: []byte(fmt.Sprint(i))}
		m.SetMessageGroup(groups[i%len(groups)])
		v5Send(t, p, m)
	}
	queueOf := map[string]int32{}
	last := map[string]int{}
	for _, m := range readTopic(t, c, 0, topic) {
		g := m.Property("SHARDING_KEY")
		if q, ok := queueOf[g]; ok && q != m.QueueID {
			t.Fatalf("group %s on queues %d and %d", g, q, m.QueueID)
		}
		queueOf[g] = m.QueueID
		var n int
		fmt.Sscan(string(m.Body), &n)
		if prev, ok := last[g]; ok && n <= prev {
			t.Fatalf("group %s: message %d stored after %d", g, n, prev)
		}
		last[g] = n
	}
	if len(queueOf) != len(groups) {
		t.Fatalf("stored groups %v, want %v", queueOf, groups)
	}
}

// TestV5ProducerDelay: a message with a delivery time is stored in the
// topic only once it is due; one due past the broker's timerMaxDelay is
// refused ILLEGAL_DELIVERY_TIME.
func TestV5ProducerDelay(t *testing.T) {
	c := startV5(t)
	topic := "V5Delay"
	p := newV5Producer(t, c, []string{topic})
	due := time.Now().Add(2 * time.Second)
	m := &rmq5.Message{Topic: topic, Body: []byte("later")}
	m.SetDelayTimestamp(due)
	r := v5Send(t, p, m)
	if n := len(readTopic(t, c, 0, topic)); n != 0 {
		t.Fatalf("%d messages in the topic before their time", n)
	}
	testwait.For(t, 15*time.Second, "the delayed message delivered", func() bool { return len(readTopic(t, c, 0, topic)) == 1 })
	got := readTopic(t, c, 0, topic)[0]
	if got.UniqKey() != r.MessageID || time.Now().Before(due.Truncate(time.Millisecond)) {
		t.Fatalf("delivered %s at %v, want %s at %v", got.UniqKey(), time.Now(), r.MessageID, due)
	}

	far := &rmq5.Message{Topic: topic, Body: []byte("too late")}
	far.SetDelayTimestamp(time.Now().Add(30 * 24 * time.Hour))
	_, err := p.Send(context.Background(), far)
	var st *rmq5.ErrRpcStatus
	if !errors.As(err, &st) || st.Code != int32(v2.Code_ILLEGAL_DELIVERY_TIME) {
		t.Fatalf("send due in 30 days: %v, want ILLEGAL_DELIVERY_TIME", err)
	}
}

// TestV5ProducerRecall: a delayed message recalled with the handle its
// send was answered with is never delivered; one sent beside it is, on
// time; a handle that does not parse, and one whose message already went
// out, are refused with BAD_REQUEST.
func TestV5ProducerRecall(t *testing.T) {
	c := startV5(t)
	topic := "V5Recall"
	p := newV5Producer(t, c, []string{topic})
	due := time.Now().Add(2 * time.Second)
	send := func(body string, at time.Time) *rmq5.SendReceipt {
		m := &rmq5.Message{Topic: topic, Body: []byte(body)}
		m.SetDelayTimestamp(at)
		r := v5Send(t, p, m)
		if r.RecallHandle == "" {
			t.Fatalf("the send of a delayed message was answered without a recall handle")
		}
		return r
	}
	gone, kept := send("recalled", due), send("kept", due)
	// Due after both: once it is out, so would the recalled one be (the
	// timer delivers in due order).
	last := send("last", due.Add(300*time.Millisecond))
	id, err := p.Recall(context.Background(), topic, gone.RecallHandle)
	if err != nil || id != gone.MessageID {
		t.Fatalf("Recall = %q, %v; want %s", id, err, gone.MessageID)
	}
	ids := func() map[string]bool {
		out := map[string]bool{}
		for _, m := range readTopic(t, c, 0, topic) {
			out[m.UniqKey()] = true
		}
		return out
	}
	testwait.For(t, 15*time.Second, "the last message delivered", func() bool { return ids()[last.MessageID] })
	if got := ids(); len(got) != 2 || !got[kept.MessageID] {
		t.Fatalf("delivered %v, want only %s and %s (not the recalled %s)", got, kept.MessageID, last.MessageID, gone.MessageID)
	}
	var st *rmq5.ErrRpcStatus
	for name, handle := range map[string]string{"malformed": "not-a-handle", "already delivered": kept.RecallHandle} {
		if _, err := p.Recall(context.Background(), topic, handle); !errors.As(err, &st) || st.Code != int32(v2.Code_BAD_REQUEST) {
			t.Errorf("recall %s: %v, want BAD_REQUEST", name, err)
		}
	}
}

// TestV5ProducerTransaction: a committed transaction's message is
// delivered, a rolled back one's never; an orphan (no end) is resolved by
// the producer's checker when the broker checks, through the producer's
// Telemetry stream, and committed.
func TestV5ProducerTransaction(t *testing.T) {
	c := startV5(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.TransactionTimeout = time.Second
		cfg.TransactionCheckInterval = time.Hour // the test runs the checks
	}))
	topic := "V5Tx"
	var checked atomic.Int32
	p := newV5Producer(t, c, []string{topic}, rmq5.WithTransactionChecker(&rmq5.TransactionChecker{
		Check: func(mv *rmq5.MessageView) rmq5.TransactionResolution {
			checked.Add(1)
			if string(mv.GetBody()) == "orphan" {
				return rmq5.COMMIT
			}
			return rmq5.ROLLBACK
		},
	}))
	send := func(body string) (rmq5.Transaction, string) {
		tx := p.BeginTransaction()
		rs, err := p.SendWithTransaction(context.Background(), &rmq5.Message{Topic: topic, Body: []byte(body)}, tx)
		if err != nil {
			t.Fatalf("send %s: %v", body, err)
		}
		return tx, rs[0].MessageID
	}
	txc, committed := send("commit")
	txr, _ := send("rollback")
	_, orphan := send("orphan")
	if n := len(readTopic(t, c, 0, topic)); n != 0 {
		t.Fatalf("%d messages delivered before any commit", n)
	}
	if err := txc.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := txr.RollBack(); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	ids := func() map[string]bool {
		out := map[string]bool{}
		for _, m := range readTopic(t, c, 0, topic) {
			out[m.UniqKey()] = true
		}
		return out
	}
	if got := ids(); len(got) != 1 || !got[committed] {
		t.Fatalf("after commit and rollback: %v, want only %s", got, committed)
	}
	time.Sleep(1100 * time.Millisecond) // the orphan outlives its immunity
	testwait.For(t, 20*time.Second, "the orphan committed by its check", func() bool {
		if _, err := c.Broker(0).CheckTransactions(); err != nil {
			t.Fatalf("check: %v", err)
		}
		return ids()[orphan]
	})
	if got := ids(); len(got) != 2 || !got[committed] || !got[orphan] || checked.Load() == 0 {
		t.Fatalf("after the check: %v (checker called %d times), want %s and %s", got, checked.Load(), committed, orphan)
	}
}
