package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
)

// v5System is Runnel driven through its gRPC door by the RocketMQ 5 Go SDK
// (github.com/apache/rocketmq-clients/golang/v5), plaintext: a producer's
// Send, then a push consumer acking every message. Transport is the
// in-process cluster's remoting transport, which the gRPC door does not
// use.
//
// The push consumer's consume time runs from its first delivery, not from
// its creation as the other systems': the SDK starts a consumer in about
// 2 s whatever the server (it polls for the server's Settings once a
// second, then sleeps a second before it first asks for its queues), which
// would be most of a short run. The CPU is over the whole phase, start
// included.
//
// A run ends with the push consumer's stop, which waits for its held
// receives: up to the broker's longest hold (20 s by default, at least
// 5 s) and 1 s more.
// MaxLongPolling shortens the hold in process (tests); the figures do not
// include the stop.
type v5System struct {
	Transport      string
	Topo           topology
	MaxLongPolling time.Duration
}

func (s *v5System) Name() string { return withTransport("v5", s.Transport) }

// quietV5SDK sends the SDK's log, at error level only, to a file under the
// temporary directory (by default it writes ~/logs/rocketmq at info), and
// has its clients speak plaintext (by default TLS without verifying).
var quietV5SDK = sync.OnceFunc(func() {
	_ = os.Setenv("rocketmq.client.logRoot", filepath.Join(os.TempDir(), "runnel-bench-v5-sdk-logs"))
	_ = os.Setenv("rocketmq.client.logLevel", "error")
	rmq5.ResetLogger()
	rmq5.EnableSsl = false
})

func (s *v5System) Run(ctx context.Context, dir string, w Workload) (res Result, err error) {
	quietV5SDK()
	res.System, res.Msgs, res.BrokerProcess = s.Name(), w.Msgs, s.Topo.process()
	cl, err := s.Topo.startRunnel(ctx, dir, []string{benchTopic}, runnelOptions{Transport: s.Transport, GRPC: true, MaxLongPolling: s.MaxLongPolling})
	if err != nil {
		return res, err
	}
	defer cl.close()
	// Every SDK client makes its own client id (host, pid, a counter and
	// the time), so the clients of successive runs never share one.
	p, err := rmq5.NewProducer(&rmq5.Config{Endpoint: cl.grpcAddr}, rmq5.WithTopics(benchTopic))
	if err != nil {
		return res, err
	}
	if err := p.Start(); err != nil {
		return res, fmt.Errorf("v5 producer: %w", err)
	}
	body := w.body()
	res.Produce, err = w.produce(ctx, cl.brokerCPU(), func(ctx context.Context) error {
		_, err := p.Send(ctx, &rmq5.Message{Topic: benchTopic, Body: body})
		return err
	})
	_ = p.GracefulStop()
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}

	count := newCounter(w.Msgs)
	start := startPhase(cl.brokerCPU())
	c, err := rmq5.NewPushConsumer(&rmq5.Config{Endpoint: cl.grpcAddr, ConsumerGroup: "bench_v5_consumer"},
		rmq5.WithPushSubscriptionExpressions(map[string]*rmq5.FilterExpression{benchTopic: rmq5.SUB_ALL}),
		rmq5.WithPushMessageListener(&rmq5.FuncMessageListener{Consume: func(*rmq5.MessageView) rmq5.ConsumerResult {
			count.add(1)
			return rmq5.SUCCESS
		}}))
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		return res, fmt.Errorf("v5 consumer: %w", err)
	}
	res.Consume, err = count.wait(ctx, start, w.Timeout)
	if err == nil {
		res.Consume.Wall = count.sinceFirst()
	}
	return res, errors.Join(err, c.GracefulStop())
}
