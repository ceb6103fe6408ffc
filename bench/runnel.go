package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/bench/internal/proc"
	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
)

const (
	benchTopic  = "BenchCompare"
	benchQueues = 8
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// runnelCluster is one name server and one broker on loopback, or a
// replicated group of brokers, storing in a run's directory: in this
// process, or in processes of their own (`runnel dev` for a single
// broker; a name server and the group's broker processes).
type runnelCluster struct {
	nsAddr, brokerAddr string
	// grpcAddr is the broker's gRPC door, "" where it has none.
	grpcAddr string
	// topicOn is where topics are created: the broker's address, or a
	// group's brokerName (its master, whichever node that is).
	topicOn string
	ns      *namesrv.Server
	bs      []*broker.Broker
	// ps are the processes of the cluster: `runnel dev`, or a name server
	// and the group's brokers.
	ps []*proc.Proc
}

// defaultTransport is the in-process cluster's remoting transport when a
// system names none. The standard library's: an embedded broker shares
// the Go scheduler with its clients, and the runtime's poller lets the
// thread that wrote a request or an answer run the peer's reader itself,
// where netpoll's poller thread sits in epoll_wait and is woken for every
// read. docs/performance-history.md measures both: std 1.3-1.5x the msg/s in one
// process; in a process of its own the broker's default, netpoll, costs
// less (std 1.11x its CPU).
const defaultTransport = remoting.TransportStd

// runnelOptions are what systems ask of a cluster besides its topics.
type runnelOptions struct {
	// Transport is the in-process cluster's remoting transport ("":
	// defaultTransport); a broker process serves its default, netpoll.
	Transport string
	// GRPC serves the gRPC door.
	GRPC bool
	// MaxLongPolling, if set, is the in-process broker's longest held gRPC
	// receive (the broker process keeps its default, 20 s).
	MaxLongPolling time.Duration
	// Group, if above 1, runs a replicated group of that many brokers
	// (group.go) in place of the single broker.
	Group int
}

func (o runnelOptions) transport() string { return cmp.Or(o.Transport, defaultTransport) }

// startRunnel starts a cluster storing in dir and creates topics on it.
func (t topology) startRunnel(ctx context.Context, dir string, topics []string, o runnelOptions) (*runnelCluster, error) {
	var (
		c   *runnelCluster
		err error
	)
	switch {
	case o.Group > 1 && t.process():
		c, err = t.startGroupProcess(ctx, dir, o.Group)
	case o.Group > 1:
		c, err = startGroupHere(dir, o.Group, o)
	case t.process():
		c, err = t.startRunnelProcess(ctx, dir, o.GRPC)
	default:
		c, err = startRunnelHere(dir, o)
	}
	if err != nil {
		return nil, err
	}
	if err := c.createTopics(ctx, topics); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func startRunnelHere(dir string, o runnelOptions) (*runnelCluster, error) {
	ns, err := startNamesrvHere(o)
	if err != nil {
		return nil, err
	}
	c := &runnelCluster{ns: ns, nsAddr: ns.Addr()}
	bCfg := brokerConfigHere(dir, ns.Addr(), o)
	if o.GRPC {
		bCfg.GRPC.ListenAddr = "127.0.0.1:0"
		bCfg.GRPC.MaxLongPolling = cmp.Or(o.MaxLongPolling, bCfg.GRPC.MaxLongPolling)
	}
	b, err := broker.New(bCfg)
	if err == nil {
		if err = b.Start(); err != nil {
			_ = b.Close()
		}
	}
	if err != nil {
		c.close()
		return nil, err
	}
	c.bs = []*broker.Broker{b}
	c.brokerAddr, c.grpcAddr, c.topicOn = b.Addr(), b.GRPCAddr(), b.Addr()
	return c, nil
}

// startNamesrvHere starts a name server in this process on loopback.
func startNamesrvHere(o runnelOptions) (*namesrv.Server, error) {
	nsCfg := namesrv.DefaultConfig()
	nsCfg.ListenAddr = "127.0.0.1:0"
	nsCfg.Transport = o.transport()
	nsCfg.Logger = quietLogger()
	ns, err := namesrv.New(nsCfg)
	if err != nil {
		return nil, err
	}
	if err := ns.Start(); err != nil {
		_ = ns.Close()
		return nil, err
	}
	return ns, nil
}

// The lines `runnel dev` prints once it serves (cmd/runnel's runDev), as
// the namesrv and broker commands do theirs (a group's processes).
var (
	devNamesrvLine = regexp.MustCompile(`^namesrv: serving on (\S+)`)
	devBrokerLine  = regexp.MustCompile(`^broker: serving on (\S+)`)
	devGRPCLine    = regexp.MustCompile(`^broker: gRPC for RocketMQ 5 SDKs on (\S+)`)
)

// startRunnelProcess runs `runnel dev` on free loopback ports, without
// its console and /metrics, logging errors only.
func (t topology) startRunnelProcess(ctx context.Context, dir string, grpc bool) (*runnelCluster, error) {
	grpcListen, want := "", []*regexp.Regexp{devNamesrvLine, devBrokerLine}
	if grpc {
		grpcListen, want = "127.0.0.1:0", append(want, devGRPCLine)
	}
	p, addrs, err := proc.Start(ctx, t.RunnelBin, []string{"dev", "--dir", dir,
		"--namesrv-listen", "127.0.0.1:0", "--broker-listen", "127.0.0.1:0", "--grpc-listen", grpcListen,
		"--metrics-listen", "", "--console-listen", "off", "--log-level", "error"}, want...)
	if err != nil {
		return nil, err
	}
	c := &runnelCluster{ps: []*proc.Proc{p}, nsAddr: addrs[0], brokerAddr: addrs[1], topicOn: addrs[1]}
	if grpc {
		c.grpcAddr = addrs[2]
	}
	return c, nil
}

// brokerCPU reads the CPU of the cluster's processes together (nil in
// process): a group's figure is its name server's and all its nodes'.
func (c *runnelCluster) brokerCPU() cpuSource {
	if len(c.ps) == 0 {
		return nil
	}
	return func() time.Duration {
		var sum time.Duration
		for _, p := range c.ps {
			sum += p.CPU()
		}
		return sum
	}
}

// createTopics creates the topics with benchQueues queues each (16 at a
// time, as a test suite's setup would) and waits for the last one's
// route, as both RocketMQ clients need one.
func (c *runnelCluster) createTopics(ctx context.Context, topics []string) error {
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = []string{c.nsAddr}
	adm, err := admin.New(cfg)
	if err != nil {
		return err
	}
	defer adm.Close()
	create := func(topic string) error {
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, err := adm.CreateTopic(ctx, admin.TopicSpec{Topic: topic, Brokers: []string{c.topicOn}, ReadQueueNums: benchQueues, WriteQueueNums: benchQueues})
			if err == nil {
				return nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("runnel: topic %s: %w", topic, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range min(16, len(topics)) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(topics)); i = next.Add(1) - 1 {
				if err := create(topics[i]); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, t := range topics {
		for {
			_, err := adm.TopicRoute(ctx, t)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("runnel: route of %s: %w", t, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func (c *runnelCluster) addr() string { return c.nsAddr }

// close stops the brokers, then the name server (processes alike: the
// name server's is the first).
func (c *runnelCluster) close() {
	for i := len(c.bs) - 1; i >= 0; i-- {
		_ = c.bs[i].Close()
	}
	for i := len(c.ps) - 1; i >= 0; i-- {
		c.ps[i].Stop()
	}
	if c.ns != nil {
		_ = c.ns.Close()
	}
}

// runnelSystem is Runnel driven by Runnel's own client. Batch > 1 sends
// batches of that many messages (one SEND_BATCH_MESSAGE each) in place of
// single sends; Topics > 1 spreads the sends round-robin over that many
// topics of benchQueues queues each, and the consumer subscribes to all.
// Transport is the in-process cluster's remoting transport (default
// defaultTransport). Group > 1 runs the same workload against a replicated
// group of that many brokers (runnel-raft3: issue 39's goals are its
// ratios to plain runnel).
type runnelSystem struct {
	Batch, Topics int
	Group         int
	Transport     string
	Topo          topology
	seq           int
}

func (s *runnelSystem) Name() string {
	name := "runnel"
	switch {
	case s.Batch > 1:
		name = fmt.Sprintf("runnel-batch%d", s.Batch)
	case s.Topics > 1:
		name = fmt.Sprintf("runnel-topics%d", s.Topics)
	case s.Group > 1:
		name = fmt.Sprintf("runnel-raft%d", s.Group)
	}
	return withTransport(name, s.Transport)
}

// withTransport names a system run on a transport other than the default.
func withTransport(name, transport string) string {
	if transport == "" || transport == defaultTransport {
		return name
	}
	return name + "@" + transport
}

// topics names the topics a run sends to.
func (s *runnelSystem) topics() []string {
	if s.Topics <= 1 {
		return []string{benchTopic}
	}
	out := make([]string, s.Topics)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", benchTopic, i)
	}
	return out
}

func (s *runnelSystem) Run(ctx context.Context, dir string, w Workload) (res Result, err error) {
	s.seq++
	res.System, res.Msgs, res.BrokerProcess = s.Name(), w.Msgs, s.Topo.process()
	topics := s.topics()
	cl, err := s.Topo.startRunnel(ctx, dir, topics, runnelOptions{Transport: s.Transport, Group: s.Group})
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
	if len(topics) > 1 {
		// One send to every topic first, untimed: the figure is the steady
		// state of sends spread over many topics, not the client's first
		// route lookup of each.
		warm := w
		warm.Msgs = len(topics)
		var i atomic.Int64
		if _, err := warm.produce(ctx, nil, func(ctx context.Context) error {
			_, err := p.Send(ctx, &client.Message{Topic: topics[i.Add(1)-1], Body: body})
			return err
		}); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
	}
	batch := max(s.Batch, 1)
	var seq atomic.Uint64
	res.Produce, err = w.produceBatches(ctx, cl.brokerCPU(), batch, func(ctx context.Context, n int) error {
		topic := topics[int(seq.Add(1)%uint64(len(topics)))]
		msgs := make([]*client.Message, n)
		for i := range msgs {
			msgs[i] = &client.Message{Topic: topic, Body: body}
		}
		_, err := p.Send(ctx, msgs...)
		return err
	})
	_ = p.Shutdown(context.Background())
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}
	if len(topics) > 1 {
		// Only the send path is measured over many topics: a push consumer
		// of thousands of topics would measure its rebalance, not delivery.
		return res, nil
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
	start := startPhase(cl.brokerCPU())
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
