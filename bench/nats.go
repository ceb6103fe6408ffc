package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/runnelmq/runnel/bench/internal/proc"
)

// natsSystem is a NATS server with JetStream on a file store, driven by
// the official Go client: synchronous publishes (each waits for the
// stream's ack) and a durable pull consumer acking every message. The
// server is embedded in this process, or a nats-server process of its
// own in the process topology.
type natsSystem struct{ Topo topology }

func (natsSystem) Name() string { return "nats" }

// natsServer is a running NATS server: its client URL, the CPU of its
// process (nil when embedded), and how to stop it.
type natsServer struct {
	url  string
	cpu  cpuSource
	stop func()
}

func (t topology) startNATS(ctx context.Context, dir string) (natsServer, error) {
	if t.process() {
		p, addrs, err := proc.Start(ctx, t.NATSBin, []string{"-a", "127.0.0.1", "-p", "-1", "-js", "-sd", dir},
			regexp.MustCompile(`Listening for client connections on (\S+)`))
		if err != nil {
			return natsServer{}, err
		}
		return natsServer{url: "nats://" + addrs[0], cpu: p.CPU, stop: p.Stop}, nil
	}
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		return natsServer{}, err
	}
	srv.Start()
	stop := func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
	if !srv.ReadyForConnections(20 * time.Second) {
		stop()
		return natsServer{}, errors.New("nats: server not ready in 20s")
	}
	return natsServer{url: srv.ClientURL(), stop: stop}, nil
}

func (s natsSystem) Run(ctx context.Context, dir string, w Workload) (res Result, err error) {
	res.System, res.Msgs, res.BrokerProcess = s.Name(), w.Msgs, s.Topo.process()
	srv, err := s.Topo.startNATS(ctx, dir)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	nc, err := nats.Connect(srv.url)
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
	res.Produce, err = w.produce(ctx, srv.cpu, func(ctx context.Context) error {
		_, err := js.Publish(ctx, "bench", body)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}

	count := newCounter(w.Msgs)
	start := startPhase(srv.cpu)
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
