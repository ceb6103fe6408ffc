//go:build !race

// The official Go client reports data races inside itself under -race, so
// the tests that run it next to Runnel's client live in this file, which
// the race build skips. The same scenarios without the official client run
// under -race in package client.

package integration

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// twoBrokersWith starts a cluster of two brokers with topic, 4 queues on
// each.
func twoBrokersWith(t *testing.T, topic string) *cluster.Cluster {
	t.Helper()
	c := rcCluster(t, cluster.Brokers(2))
	createTopic(t, c, 0, topic, 4)
	createTopic(t, c, 1, topic, 4)
	return c
}

func TestClientOfficialProducerToOurConsumer(t *testing.T) {
	c := twoBrokersWith(t, "Interop1")
	got := newRCCollector()
	ours := rcConsumer(t, c, "rc-g1", "Interop1", "TagA || TagB", got.add)
	p := newProducer(t, c)
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789"), 1000) // 10 KB: compressed by the official producer
	for i := range 40 {
		m := primitive.NewMessage("Interop1", []byte(body(i)))
		m.WithTag([]string{"TagA", "TagB", "TagC"}[i%3])
		m.WithKeys([]string{fmt.Sprintf("k%d", i)})
		m.WithProperty("n", fmt.Sprint(i))
		if _, err := p.SendSync(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	bigMsg := primitive.NewMessage("Interop1", big)
	bigMsg.WithTag("TagA")
	if _, err := p.SendSync(ctx, bigMsg); err != nil {
		t.Fatal(err)
	}
	var batch []*primitive.Message
	for i := 100; i < 105; i++ {
		m := primitive.NewMessage("Interop1", []byte(body(i)))
		m.WithTag("TagB")
		batch = append(batch, m)
	}
	if _, err := p.SendSync(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range 40 {
		if i%3 != 2 {
			want++
		}
	}
	// A TagA message last in each of the 8 queues (the producer takes them
	// in turn): once the group's offsets are past them, every queue has
	// been consumed to its end, filtered messages included.
	for i := 200; i < 208; i++ {
		m := primitive.NewMessage("Interop1", []byte(body(i)))
		m.WithTag("TagA")
		if _, err := p.SendSync(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	want += 1 + 5 + 8
	testwait.For(t, 30*time.Second, "tagged messages", func() bool { return got.len() == want })
	if err := ours.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitCommittedToEnd(t, c, "rc-g1", "Interop1", 4)
	if got.len() != want {
		t.Fatalf("got %d messages, want %d (TagC must be filtered)", got.len(), want)
	}
	m := got.get(body(4))
	if m.Tags() != "TagB" || m.Property("KEYS") != "k4" || m.Property("n") != "4" || m.Topic != "Interop1" {
		t.Fatalf("message 4: tags %q keys %q n %q topic %q", m.Tags(), m.Property("KEYS"), m.Property("n"), m.Topic)
	}
	if got.get(string(big)) == nil {
		t.Fatal("the compressed 10 KB body did not arrive inflated")
	}
	if got.get(body(102)) == nil {
		t.Fatal("batch message missing")
	}
}

func TestClientOurProducerToOfficialConsumer(t *testing.T) {
	c := twoBrokersWith(t, "Interop2")
	got := newCollector()
	newPushConsumer(t, c, "off-g2", "Interop2", "TagA", got.add)
	p := rcProducer(t, c)
	ctx := context.Background()
	var ids []string
	for i := range 30 {
		tag := []string{"TagA", "TagB"}[i%2]
		res, err := p.Send(ctx, &client.Message{Topic: "Interop2", Tags: tag, Keys: []string{fmt.Sprintf("k%d", i)},
			Properties: map[string]string{"n": fmt.Sprint(i)}, Body: []byte(body(i))})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			ids = append(ids, res.MsgID)
		}
	}
	big := bytes.Repeat([]byte("abcdefghij"), 1000)
	if _, err := p.Send(ctx, &client.Message{Topic: "Interop2", Tags: "TagA", Body: big}); err != nil {
		t.Fatal(err)
	}
	var batch []*client.Message
	for i := 100; i < 104; i++ {
		batch = append(batch, &client.Message{Topic: "Interop2", Tags: "TagA", Body: []byte(body(i))})
	}
	if _, err := p.Send(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	want := 15 + 1 + 4
	testwait.For(t, 30*time.Second, "TagA messages at the official consumer", func() bool { return got.len() == want })
	m := got.get(body(4))
	if m.GetTags() != "TagA" || m.GetKeys() != "k4" || m.GetProperty("n") != "4" || m.MsgId != ids[2] {
		t.Fatalf("message 4: tags %q keys %q n %q id %q (want %q)", m.GetTags(), m.GetKeys(), m.GetProperty("n"), m.MsgId, ids[2])
	}
	if got.get(string(big)) == nil {
		t.Fatal("our compressed body was not inflated by the official consumer")
	}
	if got.get(body(101)) == nil {
		t.Fatal("batch message missing")
	}
}

func TestClientMixedGroupSplitsQueues(t *testing.T) {
	c := twoBrokersWith(t, "Mixed")
	var mu sync.Mutex
	byOfficial, byOurs := map[string]int{}, map[string]int{}
	qOfficial, qOurs := map[queue.MessageQueue]bool{}, map[queue.MessageQueue]bool{}
	var recording bool
	official := newPushConsumer(t, c, "mixed-g", "Mixed", "*", func(m *primitive.MessageExt) {
		mu.Lock()
		defer mu.Unlock()
		byOfficial[string(m.Body)]++
		if recording {
			qOfficial[queue.MessageQueue{Topic: m.Topic, BrokerName: m.Queue.BrokerName, QueueID: int32(m.Queue.QueueId)}] = true
		}
	}, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	_ = official
	ours := rcConsumer(t, c, "mixed-g", "Mixed", "*", func(m *client.MessageExt) {
		mu.Lock()
		defer mu.Unlock()
		byOurs[string(m.Body)]++
		if recording {
			qOurs[m.Queue] = true
		}
	})
	// Our consumer holds half of the 8 queues once both have rebalanced
	// (the official one rebalances on the broker's notification or within
	// its 20 s period).
	testwait.For(t, 40*time.Second, "our consumer at 4 of 8 queues", func() bool { return rcCount(ours, "Mixed") == 4 })
	time.Sleep(2 * time.Second) // the official client's side of the same rebalance
	mu.Lock()
	recording = true
	mu.Unlock()
	p := rcProducer(t, c)
	const n = 400
	for i := range n {
		if _, err := p.Send(context.Background(), &client.Message{Topic: "Mixed", Body: []byte(body(i))}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, 40*time.Second, "every message consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			if byOfficial[body(i)]+byOurs[body(i)] == 0 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	if len(qOfficial) == 0 || len(qOurs) == 0 {
		t.Fatalf("one client got nothing: official from %d queues, ours from %d", len(qOfficial), len(qOurs))
	}
	var both []string
	for mq := range qOurs {
		if qOfficial[mq] {
			both = append(both, mq.String())
		}
	}
	if len(both) > 0 {
		t.Fatalf("queues consumed by both clients after the split: %s", strings.Join(both, "; "))
	}
	if len(qOfficial)+len(qOurs) != 8 {
		t.Fatalf("official consumed %d queues, ours %d; want 8 in total", len(qOfficial), len(qOurs))
	}
	dups := 0
	for i := range n {
		if byOfficial[body(i)]+byOurs[body(i)] > 1 {
			dups++
		}
	}
	if dups > 0 {
		t.Fatalf("%d messages delivered twice in a stable group", dups)
	}
	mu.Unlock()

	// Handover: ours shuts down cleanly (offsets persisted, UNREGISTER_CLIENT
	// sent); the official consumer takes all 8 queues from our offsets and
	// neither loses nor repeats anything.
	if err := ours.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := n; i < n+200; i++ {
		if _, err := p.Send(context.Background(), &client.Message{Topic: "Mixed", Body: []byte(body(i))}); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, 40*time.Second, "the official consumer finishes after the handover", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for i := n; i < n+200; i++ {
			if byOfficial[body(i)]+byOurs[body(i)] == 0 {
				return false
			}
		}
		return true
	})
	// Ours is down, and the group's offsets at the queues' ends: every
	// delivery that will happen has.
	waitCommittedToEnd(t, c, "mixed-g", "Mixed", 4)
	mu.Lock()
	defer mu.Unlock()
	for i := range n + 200 {
		if c := byOfficial[body(i)] + byOurs[body(i)]; c != 1 {
			t.Fatalf("%s delivered %d times across the handover", body(i), c)
		}
	}
}

// TestClientMixedOrderlyGroup: an official orderly consumer and ours share a
// group; broker locks keep every queue with one of them, ours hands the
// queues it loses over at once (UNLOCK_BATCH_MQ), and each key's messages
// arrive in order.
func TestClientMixedOrderlyGroup(t *testing.T) {
	c := rcCluster(t)
	createTopic(t, c, 0, "MixedOrder", 4)
	var mu sync.Mutex
	lastSeen := map[string]int{}
	holder := map[int]string{} // queue id -> "official" / "ours"
	var bad []string
	record := func(who string, qid int, key string, i int) {
		mu.Lock()
		defer mu.Unlock()
		if h, ok := holder[qid]; ok && h != who {
			bad = append(bad, fmt.Sprintf("queue %d consumed by %s and %s", qid, h, who))
		}
		holder[qid] = who
		if prev, ok := lastSeen[key]; ok && i != prev+1 {
			bad = append(bad, fmt.Sprintf("key %s: %d after %d", key, i, prev))
		}
		lastSeen[key] = i
	}
	parse := func(b []byte) (string, int) {
		var k string
		var i int
		fmt.Sscanf(strings.Replace(string(b), "-", " ", 1), "%s %d", &k, &i)
		return k, i
	}
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = rcClientConfig(c)
	cfg.Group = "mixed-og"
	cfg.Orderly = func(_ context.Context, msgs []*client.MessageExt) client.OrderlyResult {
		for _, m := range msgs {
			k, i := parse(m.Body)
			record("ours", int(m.Queue.QueueID), k, i)
		}
		return client.OrderlySuccess
	}
	ours := clitest.StartConsumer(t, cfg, "MixedOrder", "*")
	testwait.For(t, testwait.Default, "ours at 4 of 4 queues", func() bool { return rcCount(ours, "MixedOrder") == 4 })
	// The official client never unlocks a queue it gives up (its lock lapses
	// after 60 s), so ours starts first and hands queues over with UNLOCK.
	newPushConsumer(t, c, "mixed-og", "MixedOrder", "*", func(m *primitive.MessageExt) {
		k, i := parse(m.Body)
		record("official", m.Queue.QueueId, k, i)
	}, consumer.WithConsumerOrder(true))
	testwait.For(t, 40*time.Second, "ours down to 2 of 4 queues", func() bool { return rcCount(ours, "MixedOrder") == 2 })
	time.Sleep(2 * time.Second)

	pcfg := client.DefaultProducerConfig()
	pcfg.Client = rcClientConfig(c)
	pcfg.Selector = client.HashSelector{}
	p := clitest.StartProducer(t, pcfg)
	const keys, per = 8, 25
	for i := range per {
		for k := range keys {
			key := fmt.Sprintf("k%d", k)
			if _, err := p.Send(context.Background(), &client.Message{Topic: "MixedOrder", ShardingKey: key, Body: []byte(fmt.Sprintf("%s-%d", key, i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	testwait.For(t, 40*time.Second, "every key complete", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(lastSeen) != keys {
			return false
		}
		for _, i := range lastSeen {
			if i != per-1 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("%d violations, first: %s", len(bad), bad[0])
	}
	who := map[string]bool{}
	for _, h := range holder {
		who[h] = true
	}
	if !who["official"] || !who["ours"] {
		t.Fatalf("queues held by %v; want both clients", holder)
	}
}
