package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/offset"
)

// TestConsumeFromLastAndTimestamp: where a new group starts. The policy
// applies only when the broker has no offset for the group: a Java broker,
// and Runnel like it, answers QUERY_CONSUMER_OFFSET of a young queue (min
// offset 0, still holding its first message) with 0 instead of "not
// found", so there a new group reads from the start whatever ConsumeFrom
// says (the official clients behave the same). The fake answers "not
// found", which shows the policies themselves.
func TestConsumeFromLastAndTimestamp(t *testing.T) {
	forBackends(t, 1, testConsumeFromLastAndTimestamp)
}

func testConsumeFromLastAndTimestamp(t *testing.T, be *backend) {
	be.createTopic(t, "T", 2)
	p := startProducer(t, be.ns, nil)
	produce(t, p, "T", 0, 10)
	time.Sleep(20 * time.Millisecond) // store timestamps on either side of mark
	mark := time.Now()
	time.Sleep(20 * time.Millisecond)
	produce(t, p, "T", 10, 10)

	last, stamp := newCollector(), newCollector()
	cl := newConsumer(t, be.ns, "g-last", func(cfg *PushConsumerConfig) {
		cfg.ConsumeFrom = offset.ConsumeFromLastOffset
		cfg.Concurrently = last.listener()
	})
	startConsumer(t, cl, "T", "*")
	ct := newConsumer(t, be.ns, "g-ts", func(cfg *PushConsumerConfig) {
		cfg.ConsumeFrom = offset.ConsumeFromTimestamp
		cfg.ConsumeTimestamp = mark
		cfg.Concurrently = stamp.listener()
	})
	startConsumer(t, ct, "T", "*")
	// Both consumers have their queues, so their start offsets are fixed
	// before the next messages are sent.
	waitFor(t, 5*time.Second, "queues assigned", func() bool {
		return countTopic(cl.Assigned(), "T") == 2 && countTopic(ct.Assigned(), "T") == 2
	})
	produce(t, p, "T", 20, 6)

	if be.fake == nil {
		// Young queues: both groups start at offset 0.
		waitFor(t, 5*time.Second, "every message at the LAST consumer", func() bool { return last.distinct() == 26 })
		waitFor(t, 5*time.Second, "every message at the TIMESTAMP consumer", func() bool { return stamp.distinct() == 26 })
		return
	}
	waitFor(t, 5*time.Second, "new messages at the LAST consumer", func() bool { return last.distinct() == 6 })
	waitFor(t, 5*time.Second, "messages after the timestamp", func() bool { return stamp.distinct() == 16 })
	time.Sleep(100 * time.Millisecond) // a late old message would show now
	last.mu.Lock()
	defer last.mu.Unlock()
	for b := range last.count {
		if b < "m-00020" {
			t.Fatalf("LAST consumer got old message %s", b)
		}
	}
	stamp.mu.Lock()
	defer stamp.mu.Unlock()
	for b := range stamp.count {
		if b < "m-00010" {
			t.Fatalf("TIMESTAMP consumer got %s, stored before the timestamp", b)
		}
	}
}

// TestBrokerResetsConsumerOffset: RESET_CONSUMER_CLIENT_OFFSET from the
// broker drops the queues without persisting their offsets, restarts them
// at the new offsets, and consumption runs on from there to the end.
func TestBrokerResetsConsumerOffset(t *testing.T) {
	forBackends(t, 1, testBrokerResetsConsumerOffset)
}

func testBrokerResetsConsumerOffset(t *testing.T, be *backend) {
	be.createTopic(t, "T", 2)
	p := startProducer(t, be.ns, nil)
	produce(t, p, "T", 0, 40)
	col := newCollector()
	cons := newConsumer(t, be.ns, "g", func(cfg *PushConsumerConfig) { cfg.Concurrently = col.listener() })
	startConsumer(t, cons, "T", "*")
	waitFor(t, 5*time.Second, "40 consumed", func() bool { return col.distinct() == 40 })
	waitFor(t, 5*time.Second, "offsets at the end", func() bool {
		return be.brokerOffset(0, "g", "T", 0) == 20 && be.brokerOffset(0, "g", "T", 1) == 20
	})
	// Reset both queues to offset 15: the 2*5 messages from there on come again.
	before := col.deliveries()
	be.resetOffsets(t, "g", "T", map[int]int64{0: 15, 1: 15})
	waitFor(t, 5*time.Second, "redelivery from offset 15", func() bool { return col.deliveries() == before+10 })
	waitFor(t, 5*time.Second, "offsets back at the end", func() bool {
		return be.brokerOffset(0, "g", "T", 0) == 20 && be.brokerOffset(0, "g", "T", 1) == 20
	})
	col.mu.Lock()
	defer col.mu.Unlock()
	for i := range 40 {
		b := fmt.Sprintf("m-%05d", i)
		want := 1
		if i >= 30 { // offsets 15..19 of both queues: round robin put m-00030.. there
			want = 2
		}
		if col.count[b] != want {
			t.Fatalf("%s delivered %d times, want %d", b, col.count[b], want)
		}
	}
}
