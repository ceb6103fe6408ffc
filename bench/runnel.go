package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/namesrv"
)

const (
	benchTopic  = "BenchCompare"
	benchQueues = 8
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// runnelCluster is one name server and one broker in this process, on
// loopback, storing in dir.
type runnelCluster struct {
	ns *namesrv.Server
	b  *broker.Broker
}

func startRunnel(ctx context.Context, dir string) (*runnelCluster, error) {
	nsCfg := namesrv.DefaultConfig()
	nsCfg.ListenAddr = "127.0.0.1:0"
	nsCfg.Logger = quietLogger()
	ns, err := namesrv.New(nsCfg)
	if err != nil {
		return nil, err
	}
	if err := ns.Start(); err != nil {
		_ = ns.Close()
		return nil, err
	}
	c := &runnelCluster{ns: ns}
	bCfg := broker.DefaultConfig()
	bCfg.ListenAddr = "127.0.0.1:0"
	bCfg.NamesrvAddrs = []string{ns.Addr()}
	bCfg.StoreDir = dir
	bCfg.Logger = quietLogger()
	if c.b, err = broker.New(bCfg); err == nil {
		if err = c.b.Start(); err != nil {
			_ = c.b.Close()
			c.b = nil
		}
	}
	if err != nil {
		c.close()
		return nil, err
	}
	if err := c.createTopic(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// createTopic creates the bench topic with benchQueues queues and waits
// for its route, as both RocketMQ clients need one.
func (c *runnelCluster) createTopic(ctx context.Context) error {
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = []string{c.ns.Addr()}
	adm, err := admin.New(cfg)
	if err != nil {
		return err
	}
	defer adm.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err = adm.CreateTopic(ctx, admin.TopicSpec{Topic: benchTopic, Brokers: []string{c.b.Addr()}, ReadQueueNums: benchQueues, WriteQueueNums: benchQueues})
		if err == nil {
			_, err = adm.TopicRoute(ctx, benchTopic)
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runnel: topic %s: %w", benchTopic, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *runnelCluster) addr() string { return c.ns.Addr() }

func (c *runnelCluster) close() {
	if c.b != nil {
		_ = c.b.Close()
	}
	_ = c.ns.Close()
}

// runnelSystem is Runnel driven by Runnel's own client.
type runnelSystem struct{ seq int }

func (*runnelSystem) Name() string { return "runnel" }

func (s *runnelSystem) Run(ctx context.Context, dir string, w Workload) (res Result, err error) {
	s.seq++
	res.System, res.Msgs = s.Name(), w.Msgs
	cl, err := startRunnel(ctx, dir)
	if err != nil {
		return res, err
	}
	defer cl.close()
	clientCfg := func(role string) client.ClientConfig {
		cfg := client.DefaultClientConfig()
		cfg.NameServerAddrs = []string{cl.addr()}
		cfg.InstanceName = fmt.Sprintf("bench-%s-%d", role, s.seq)
		cfg.ClientIP = "127.0.0.1"
		cfg.Logger = quietLogger()
		return cfg
	}

	pCfg := client.DefaultProducerConfig()
	pCfg.Client = clientCfg("p")
	pCfg.Group = "bench_producer"
	p, err := client.NewProducer(pCfg)
	if err != nil {
		return res, err
	}
	if err := p.Start(ctx); err != nil {
		return res, err
	}
	body := w.body()
	res.Produce, err = w.produce(ctx, func(ctx context.Context) error {
		_, err := p.Send(ctx, &client.Message{Topic: benchTopic, Body: body})
		return err
	})
	_ = p.Shutdown(context.Background())
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}

	count := newCounter(w.Msgs)
	cCfg := client.DefaultPushConsumerConfig()
	cCfg.Client = clientCfg("c")
	cCfg.Group = "bench_consumer"
	cCfg.ConsumeFrom = client.ConsumeFromFirstOffset
	cCfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		count.add(len(msgs))
		return client.ConsumeSuccess
	}
	start := time.Now()
	c, err := client.NewPushConsumer(cCfg)
	if err == nil {
		err = c.Subscribe(benchTopic, "*")
	}
	if err == nil {
		err = c.Start(ctx)
	}
	if err != nil {
		return res, fmt.Errorf("consumer: %w", err)
	}
	res.Consume, err = count.wait(ctx, start, w.Timeout)
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(err, c.Shutdown(shutCtx))
	return res, err
}
