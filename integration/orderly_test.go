//go:build !race

// The official client's orderly push consumer races with itself: its pull
// goroutine puts messages into a process queue (an unsynchronised
// gods treemap) while the orderly consume goroutine takes them
// (processQueue.putMessage vs takeMessages), which the race detector
// reports and which fails the test binary. This file is built without
// -race only; the broker side (LOCK_BATCH_MQ) is also covered by the
// race-enabled TestLockBatch in package broker.

package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestOrderlyConsumer: an orderly push consumer locks its queues with
// LOCK_BATCH_MQ before consuming and receives each sharding key's
// messages in send order.
func TestOrderlyConsumer(t *testing.T) {
	c := cluster.Start(t)
	const topic = "Ordered"
	createTopic(t, c, 0, topic, 4)
	p := newProducer(t, c, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	const keys, per = 3, 20
	for i := range per {
		for k := range keys {
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("k%d:%d", k, i)))
			m.WithShardingKey(fmt.Sprintf("key-%d", k))
			if _, err := p.SendSync(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	seen := map[string][]int{}
	total := 0
	newPushConsumer(t, c, "g-orderly", topic, "*", func(m *primitive.MessageExt) {
		key, seq, _ := strings.Cut(string(m.Body), ":")
		n, _ := strconv.Atoi(seq)
		mu.Lock()
		seen[key] = append(seen[key], n)
		total++
		mu.Unlock()
	}, consumer.WithConsumerOrder(true))
	testwait.For(t, 30*time.Second, "every ordered message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return total >= keys*per
	})
	mu.Lock()
	defer mu.Unlock()
	for key, seqs := range seen {
		for i, n := range seqs {
			if n != i {
				t.Fatalf("%s out of order: %v", key, seqs)
			}
		}
	}
}
