package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// officialSystem is Runnel driven by the official RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2): SendSync and a push consumer.
// Transport is the in-process cluster's remoting transport (default
// defaultTransport).
type officialSystem struct {
	Transport string
	Topo      topology
	seq       int
}

func (s *officialSystem) Name() string { return withTransport("official", s.Transport) }

func (s *officialSystem) Run(ctx context.Context, dir string, w Workload) (res Result, err error) {
	rlog.SetLogLevel("fatal")
	s.seq++
	res.System, res.Msgs, res.BrokerProcess = s.Name(), w.Msgs, s.Topo.process()
	cl, err := s.Topo.startRunnel(ctx, dir, []string{benchTopic}, runnelOptions{Transport: s.Transport})
	if err != nil {
		return res, err
	}
	defer cl.close()
	// The official client keeps one instance per client id in a global
	// table: every run's clients get their own instance names.
	instance := func(role string) string { return fmt.Sprintf("bench-official-%d-%s%d", os.Getpid(), role, s.seq) }
	ns := primitive.NamesrvAddr{cl.addr()}

	p, err := rocketmq.NewProducer(producer.WithNameServer(ns), producer.WithInstanceName(instance("p")),
		producer.WithGroupName("bench_official_producer"), producer.WithRetry(2))
	if err != nil {
		return res, err
	}
	if err := p.Start(); err != nil {
		return res, err
	}
	body := w.body()
	send := func(ctx context.Context) error {
		r, err := p.SendSync(ctx, primitive.NewMessage(benchTopic, body))
		if err == nil && r.Status != primitive.SendOK {
			err = fmt.Errorf("send status %d", r.Status)
		}
		return err
	}
	// One send first, untimed (and consumed with the rest): the official
	// client's first sends race inside it. Its route update gives the
	// producer the topic's queues before it stores the brokers'
	// addresses, so another goroutine's first send could pick a queue
	// whose broker it could not find yet ("topic=... route info not
	// found"): once in about 25 runs of 16 goroutines starting together.
	if err := send(ctx); err != nil {
		_ = p.Shutdown()
		return res, fmt.Errorf("warm-up: %w", err)
	}
	res.Produce, err = w.produce(ctx, cl.brokerCPU(), send)
	_ = p.Shutdown()
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}

	count := newCounter(w.Msgs + 1) // the warm-up's too
	start := startPhase(cl.brokerCPU())
	c, err := rocketmq.NewPushConsumer(consumer.WithNameServer(ns), consumer.WithInstance(instance("c")),
		consumer.WithGroupName("bench_official_consumer"), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		return res, err
	}
	err = c.Subscribe(benchTopic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		count.add(len(msgs))
		return consumer.ConsumeSuccess, nil
	})
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		return res, fmt.Errorf("official consumer: %w", err)
	}
	res.Consume, err = count.wait(ctx, start, w.Timeout)
	return res, errors.Join(err, c.Shutdown())
}
