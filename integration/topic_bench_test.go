package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// createTopicRaw sends UPDATE_AND_CREATE_TOPIC to the broker at addr, as
// the official admin does, without an admin client per call.
func createTopicRaw(ctx context.Context, cl *remoting.Client, addr, topic string, queues int32) error {
	hdr := protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: protocol.DefaultTopicKey, ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: protocol.PermRead | protocol.PermWrite, TopicFilterType: protocol.TopicFilterSingleTag,
	}
	resp, err := cl.Invoke(ctx, addr, protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, hdr.Encode(), nil))
	if err != nil {
		return err
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("create %s: code %d %s", topic, resp.Code, resp.Remark)
	}
	return nil
}

// createTopicsRaw creates the topics named prefix0..prefix(n-1) from
// creators goroutines.
func createTopicsRaw(tb testing.TB, cl *remoting.Client, addr, prefix string, n, creators int) {
	tb.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, creators)
	for range creators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := createTopicRaw(ctx, cl, addr, prefix+strconv.FormatInt(i, 10), 8)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// BenchmarkCreateTopic: the time to create one topic (8 queues) through
// UPDATE_AND_CREATE_TOPIC, answered only once the name server has its
// route, on a broker that already has `existing` topics;
// creators=1 is one admin creating topics one after another, creators=16
// a burst of concurrent creations. RUNNEL_BENCH_TOPICS overrides the
// existing counts (comma-separated), e.g. to measure the old code at 1,000.
func BenchmarkCreateTopic(b *testing.B) {
	existing := []int{10000}
	if s := os.Getenv("RUNNEL_BENCH_TOPICS"); s != "" {
		existing = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatalf("RUNNEL_BENCH_TOPICS: %v", err)
			}
			existing = append(existing, n)
		}
	}
	for _, n := range existing {
		for _, creators := range []int{1, 16} {
			b.Run(fmt.Sprintf("existing=%d/creators=%d", n, creators), func(b *testing.B) {
				c := cluster.Start(b)
				cl := remoting.NewClient(remoting.DefaultClientConfig())
				defer cl.Close()
				addr := c.BrokerAddr(0)
				start := time.Now()
				createTopicsRaw(b, cl, addr, "Pre", n, 16)
				prefill := float64(time.Since(start).Microseconds()) / float64(max(n, 1))
				b.ResetTimer()
				createTopicsRaw(b, cl, addr, "New", b.N, creators)
				b.StopTimer()
				b.ReportMetric(prefill, "prefill-µs/topic")
				if r, code := routeAt(b, c.NamesrvAddr(), "New"+strconv.Itoa(b.N-1)); code != protocol.RespSuccess || len(r.QueueDatas) != 1 {
					b.Fatalf("the last topic's route: code %d %+v", code, r)
				}
				if _, code := routeAt(b, c.NamesrvAddr(), "Pre0"); code != protocol.RespSuccess {
					b.Fatalf("the first topic's route: code %d", code)
				}
			})
		}
	}
}
