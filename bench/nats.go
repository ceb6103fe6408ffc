package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsSystem is an embedded NATS server with JetStream on a file store,
// driven by the official Go client: synchronous publishes (each waits for
// the stream's ack) and a durable pull consumer acking every message.
type natsSystem struct{}

func (natsSystem) Name() string { return "nats" }

func (s natsSystem) Run(ctx context.Context, dir string, w Workload) (res Result, err error) {
	res.System, res.Msgs = s.Name(), w.Msgs
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		return res, err
	}
	srv.Start()
	defer func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}()
	if !srv.ReadyForConnections(20 * time.Second) {
		return res, errors.New("nats: server not ready in 20s")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		return res, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return res, err
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench"}, Storage: jetstream.FileStorage})
	if err != nil {
		return res, fmt.Errorf("nats: stream: %w", err)
	}

	body := w.body()
	res.Produce, err = w.produce(ctx, func(ctx context.Context) error {
		_, err := js.Publish(ctx, "bench", body)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}

	count := newCounter(w.Msgs)
	start := startPhase()
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "bench", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		return res, fmt.Errorf("nats: consumer: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		_ = m.Ack()
		count.add(1)
	})
	if err != nil {
		return res, fmt.Errorf("nats: consume: %w", err)
	}
	res.Consume, err = count.wait(ctx, start, w.Timeout)
	cc.Stop()
	return res, err
}
