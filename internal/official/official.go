// Package official starts the official RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2), the ground truth of our wire,
// in tests: instances with unique names, closed at the test's cleanup.
// Only tests import it.
package official

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"go.uber.org/goleak"
)

var instanceSeq atomic.Int64

// Instance returns a client instance name unique in the process: official
// clients with the same instance name in one process share a client id and
// connections, so a broker would see two consumers of a group as one, and
// a test's client would reuse another test's.
func Instance(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), instanceSeq.Add(1))
}

// Admin returns an official admin client of the name server namesrv; opts
// come after that. It is closed at t's cleanup.
func Admin(t testing.TB, namesrv string, opts ...admin.AdminOption) admin.Admin {
	t.Helper()
	all := append([]admin.AdminOption{admin.WithResolver(primitive.NewPassthroughResolver([]string{namesrv}))}, opts...)
	a, err := admin.NewAdmin(all...)
	if err != nil {
		t.Fatalf("official: new admin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// Producer starts an official producer of the name server namesrv, with a
// unique instance name; opts come after those. It is shut down at t's
// cleanup.
func Producer(t testing.TB, namesrv string, opts ...producer.Option) rocketmq.Producer {
	t.Helper()
	p, err := rocketmq.NewProducer(producerOptions(namesrv, opts)...)
	return started(t, p, err)
}

// TransactionProducer is Producer for a transaction producer whose local
// transactions l executes and checks.
func TransactionProducer(t testing.TB, namesrv string, l primitive.TransactionListener, opts ...producer.Option) rocketmq.TransactionProducer {
	t.Helper()
	p, err := rocketmq.NewTransactionProducer(l, producerOptions(namesrv, opts)...)
	return started(t, p, err)
}

func producerOptions(namesrv string, opts []producer.Option) []producer.Option {
	return append([]producer.Option{
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{namesrv})),
		producer.WithInstanceName(Instance("p")),
	}, opts...)
}

// started fails t with err (making p failed), else starts p and shuts it
// down at t's cleanup.
func started[P interface {
	Start() error
	Shutdown() error
}](t testing.TB, p P, err error) P {
	t.Helper()
	if err != nil {
		t.Fatalf("official: new producer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("official: start producer: %v", err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// TopicList asks the name server at namesrv for every topic
// (GET_ALL_TOPIC_LIST_FROM_NAMESERVER) through a new official admin of
// opts, within 10 s.
func TopicList(t testing.TB, namesrv string, opts ...admin.AdminOption) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := Admin(t, namesrv, opts...).FetchAllTopicList(ctx)
	if err != nil {
		return nil, err
	}
	return list.TopicList, nil
}

// Leftovers allows, in a goroutine-leak check, what the official client
// leaves running: a cache janitor started when its packages load, and its
// producer's periodic tasks, which sleep up to 10 s before they first look
// at the shutdown signal (func1.2 is its route update, whose first query,
// to a name server a test has already closed, may still be waiting out
// its timeout when the tests end).
var Leftovers = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/patrickmn/go-cache.(*janitor).Run"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.1"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.2"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.3"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.4"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).Start.func1.5"),
	// A push consumer's statistics tickers (six, one a sampling interval,
	// never stopped by Shutdown) and its rebalance loop's sleep, a
	// transaction producer's check loop.
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*statsItemSet).init.func1"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*statsItemSet).init.func2"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*statsItemSet).init.func3"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*statsItemSet).init.func4"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*statsItemSet).init.func5"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*statsItemSet).init.func6"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*pushConsumer).Start.func1.2"),
	// A consumer's held pulls (push or pull consumer) outlive its
	// Shutdown: each waits out its own timeout, not its connection's
	// close, for the broker's answer.
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/internal.(*rmqClient).PullMessage"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/producer.(*transactionProducer).checkTransactionState"),
	// An orderly push consumer's consume loop waits for messages in
	// processQueue.takeMessages, 10 ms sleeps up to 5 s, without looking
	// at the shutdown (seen once at the end of the integration package's
	// second pass).
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-client-go/v2/consumer.(*processQueue).takeMessages"),
}

// V5Leftovers allows what the RocketMQ 5 Go SDK
// (github.com/apache/rocketmq-clients/golang/v5) leaves running after its
// clients' GracefulStop: its tickers and client manager's loops, its
// log file's rotation, OpenCensus's worker, and the grpc-go client
// channels it does not close.
var V5Leftovers = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5/pkg/ticker.Tick.func1"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func1"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func2"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func3"),
	goleak.IgnoreAnyFunction("github.com/apache/rocketmq-clients/golang/v5.(*defaultClientManager).startUp.func4"),
	goleak.IgnoreAnyFunction("github.com/natefinch/lumberjack.(*Logger).millRun"),
	goleak.IgnoreAnyFunction("go.opencensus.io/stats/view.(*worker).start"),
	goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	// A client stream's watcher, until the stream's context ends (the
	// SDK's Telemetry streams outlive GracefulStop).
	goleak.IgnoreAnyFunction("google.golang.org/grpc.newClientStreamWithParams.func4"),
}
