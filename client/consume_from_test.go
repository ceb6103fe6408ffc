package client

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/store"
)

// TestConsumeFromLastAndTimestamp: where a new group starts. The policy
// applies only when the broker has no offset for the group, and a Java
// broker, and Runnel like it, answers QUERY_CONSUMER_OFFSET of a young
// queue (min offset 0) with 0 instead of "not found", so there a new group
// reads from the start whatever ConsumeFrom says. So on Runnel the queues
// are made old first: their store stamps messages with a fake clock, and
// retention deletes the oldest batch, leaving min offsets above 0.
func TestConsumeFromLastAndTimestamp(t *testing.T) {
	t.Run("runnel", func(t *testing.T) {
		clock := fakeclock.New(time.Now().Add(-3 * time.Hour))
		be := startRunnel(t, 1, func(_ int, cfg *config.Config) {
			cfg.StoreOptions = func(o *store.Options) {
				o.Now = clock.Now
				o.FileReservedTime = time.Hour
				o.RetentionInterval = -1 // retention runs when the test says
			}
		})
		h := history{now: clock.Now, pass: clock.Advance, retired: 10, retire: func(t *testing.T) {
			if _, err := be.runnel.Broker(0).Store().Retain(clock.Now()); err != nil {
				t.Fatal(err)
			}
		}}
		testConsumeFromLastAndTimestamp(t, be, h)
	})
}

// history is how a test makes the past of a queue: now and pass are the
// clock the broker stamps messages with; retire, if set, deletes messages
// stored more than an hour before now (the first retired of the test's).
type history struct {
	now     func() time.Time
	pass    func(time.Duration)
	retire  func(t *testing.T)
	retired int
}

func testConsumeFromLastAndTimestamp(t *testing.T, be *backend, h history) {
	p := be.producerOnNewTopic(t, "T", 2)
	produce(t, p, "T", 0, 10) // retired where the backend retires
	h.pass(2 * time.Hour)
	produce(t, p, "T", 10, 10) // old but kept: before the mark
	h.pass(time.Minute)
	mark := h.now()
	h.pass(time.Minute)
	produce(t, p, "T", 20, 10) // after the mark
	pc := startPullConsumer(t, be, "DEFAULT_CONSUMER")
	ctx := context.Background()
	mqs, err := pc.MessageQueues(ctx, "T")
	if err != nil || len(mqs) != 2 {
		t.Fatalf("queues %v %v", mqs, err)
	}
	if h.retire != nil {
		h.retire(t)
		for _, mq := range mqs {
			if min, err := pc.MinOffset(ctx, mq); err != nil || min == 0 {
				t.Fatalf("min offset of %v after retention: %d %v; the queues must be old for the policies to apply", mq, min, err)
			}
		}
	}

	last, stamp, first := newCollector(), newCollector(), newCollector()
	start := func(group string, from offset.ConsumeFrom, col *collector) *PushConsumer {
		cons := newConsumer(t, be.ns, group, func(cfg *PushConsumerConfig) {
			cfg.ConsumeFrom = from
			cfg.ConsumeTimestamp = mark
			cfg.Concurrently = col.listener()
		})
		startConsumer(t, cons, "T", "*")
		return cons
	}
	consumers := []*PushConsumer{
		start("g-last", offset.ConsumeFromLastOffset, last),
		start("g-ts", offset.ConsumeFromTimestamp, stamp),
		start("g-first", offset.ConsumeFromFirstOffset, first),
	}
	// A queue is assigned once its start offset is fixed, so the next
	// messages come after every start.
	testwait.For(t, testwait.Default, "queues assigned", func() bool {
		for _, c := range consumers {
			if countTopic(c.Assigned(), "T") != 2 {
				return false
			}
		}
		return true
	})
	produce(t, p, "T", 30, 6)

	be.waitAtEnd(t, "T", consumers...)
	for _, tc := range []struct {
		name     string
		col      *collector
		from, to int // the bodies m-<from> .. m-<to-1>
	}{
		{"LAST", last, 30, 36},
		{"TIMESTAMP", stamp, 20, 36},
		{"FIRST", first, h.retired, 36},
	} {
		tc.col.mu.Lock()
		got := slices.Sorted(maps.Keys(tc.col.count))
		tc.col.mu.Unlock()
		var want []string
		for i := tc.from; i < tc.to; i++ {
			want = append(want, fmt.Sprintf("m-%05d", i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s consumer got %v, want m-%05d..m-%05d", tc.name, got, tc.from, tc.to-1)
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
	p := be.producerOnNewTopic(t, "T", 2)
	produce(t, p, "T", 0, 40)
	_, col := startCollecting(t, be.ns, "g", "T")
	testwait.For(t, testwait.Default, "40 consumed", func() bool { return col.distinct() == 40 })
	testwait.For(t, testwait.Default, "offsets at the end", func() bool {
		return be.brokerOffset(0, "g", "T", 0) == 20 && be.brokerOffset(0, "g", "T", 1) == 20
	})
	// Reset both queues to offset 15: the 2*5 messages from there on come again.
	before := col.deliveries()
	be.resetOffsets(t, "g", "T", map[int]int64{0: 15, 1: 15})
	testwait.For(t, testwait.Default, "redelivery from offset 15", func() bool { return col.deliveries() == before+10 })
	testwait.For(t, testwait.Default, "offsets back at the end", func() bool {
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
