//go:build !race

// Built without -race only: the official client's push consumer races with
// itself (see retry_test.go). The broker side of transactions is covered
// under -race in package broker.

package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/internal/testwait"
)

// txListener answers ExecuteLocalTransaction and CheckLocalTransaction
// from tables keyed by message body, and counts the checks.
type txListener struct {
	execute map[string]primitive.LocalTransactionState
	check   map[string]primitive.LocalTransactionState

	mu      sync.Mutex
	checked map[string]int
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	return l.execute[string(m.Body)]
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	l.checked[string(m.Body)]++
	l.mu.Unlock()
	if s, ok := l.check[string(m.Body)]; ok {
		return s
	}
	return primitive.UnkonwnState
}

func (l *txListener) checks(body string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checked[body]
}

// TestOfficialTransactionProducer drives the official TransactionProducer,
// unchanged, against a broker checking every 100 ms with a 300 ms
// transaction timeout: a committed message is delivered once, a rolled
// back one never, and one left UNKNOW is delivered once the broker's check
// gets COMMIT from CheckLocalTransaction.
func TestOfficialTransactionProducer(t *testing.T) {
	c := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.TransactionCheckInterval = 100 * time.Millisecond
		cfg.TransactionTimeout = 300 * time.Millisecond
	}))
	const topic = "TxOfficial"
	createTopic(t, c, 0, topic, 4)
	got := newCollector()
	newPushConsumer(t, c, "g-tx", topic, "*", got.add)

	l := &txListener{
		execute: map[string]primitive.LocalTransactionState{
			"commit":   primitive.CommitMessageState,
			"rollback": primitive.RollbackMessageState,
			"unknown":  primitive.UnkonwnState,
		},
		check:   map[string]primitive.LocalTransactionState{"unknown": primitive.CommitMessageState, "rollback": primitive.RollbackMessageState},
		checked: map[string]int{},
	}
	group := "pg-" + t.Name()
	p := official.TransactionProducer(t, c.NamesrvAddr(), l, producer.WithGroupName(group), producer.WithRetry(2))

	for _, body := range []string{"commit", "rollback", "unknown"} {
		m := primitive.NewMessage(topic, []byte(body))
		m.WithTag("TxTag")
		m.WithKeys([]string{"key-" + body})
		res, err := p.SendMessageInTransaction(context.Background(), m)
		if err != nil {
			t.Fatalf("send %s: %v", body, err)
		}
		if res.Status != primitive.SendOK || res.State != l.execute[body] {
			t.Fatalf("send %s: %+v", body, res)
		}
	}

	testwait.For(t, 30*time.Second, "the committed message", func() bool { return got.get("commit") != nil })
	testwait.For(t, 30*time.Second, "the message committed by a check", func() bool { return got.get("unknown") != nil })
	if n := l.checks("commit"); n != 0 {
		t.Errorf("the committed message was checked %d times", n)
	}
	if l.checks("unknown") == 0 {
		t.Error("the unknown message was delivered without a check")
	}
	for _, body := range []string{"commit", "unknown"} {
		m := got.get(body)
		if m.GetTags() != "TxTag" || m.GetKeys() != "key-"+body || m.GetProperty(primitive.PropertyProducerGroup) != group {
			t.Errorf("%s delivered as %v", body, m)
		}
	}

	// By now every transaction has ended, so nothing more can come.
	b := c.Broker(0)
	var stored int64
	for q := int32(0); q < 4; q++ {
		stored += b.Store().MaxOffset(topic, q)
	}
	if stored != 2 {
		t.Fatalf("%d messages stored in %s, want 2", stored, topic)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if got.msgs["rollback"] != nil || got.dups != 0 {
		t.Fatalf("rolled back message delivered (%v) or duplicates (%d)", got.msgs["rollback"] != nil, got.dups)
	}
}
