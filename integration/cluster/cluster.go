// Package cluster starts a whole Runnel cluster in-process for tests: one
// name server (or several) and N brokers on 127.0.0.1 with random ports and stores in
// the test's temporary directory. Everything it starts is closed by the
// test's cleanup.
package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/namesrv"
)

// Option adjusts a cluster.
type Option func(*options)

type options struct {
	brokers   int
	namesrvs  int
	configure func(i int, cfg *config.Config)
	nsConfig  func(cfg *namesrv.Config)
	logger    *slog.Logger
	group     int  // a replicated group of this many nodes (group.go)
	raftTCP   bool // its raft over loopback TCP
	raftTLS   bool // and over mutual TLS
	grpc      bool // every broker serves a gRPC door (grpc.go)
}

// Brokers sets the number of brokers (default 1). Broker i is named
// "broker-a", "broker-b", ... in cluster "DefaultCluster".
func Brokers(n int) Option { return func(o *options) { o.brokers = n } }

// Namesrvs sets the number of name servers (default 1). Every broker
// registers with all of them.
func Namesrvs(n int) Option { return func(o *options) { o.namesrvs = n } }

// Configure lets the test adjust broker i's config before it starts (and
// restarts). Several run in the order given.
func Configure(fn func(i int, cfg *config.Config)) Option {
	return func(o *options) {
		prev := o.configure
		o.configure = func(i int, cfg *config.Config) {
			if prev != nil {
				prev(i, cfg)
			}
			fn(i, cfg)
		}
	}
}

// ConfigureNamesrv lets the test adjust every name server's config before
// it starts (and restarts). Several run in the order given.
func ConfigureNamesrv(fn func(cfg *namesrv.Config)) Option {
	return func(o *options) {
		prev := o.nsConfig
		o.nsConfig = func(cfg *namesrv.Config) {
			if prev != nil {
				prev(cfg)
			}
			fn(cfg)
		}
	}
}

// Logger sets the logger of every node. Default: discard, unless the
// environment variable RUNNEL_TEST_LOG is set (then text to stderr).
func Logger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Cluster is a running in-process cluster.
type Cluster struct {
	t    testing.TB
	opts options

	mu      sync.Mutex
	ns      []*namesrv.Server // nil while stopped; addresses fixed after the first start
	nsAddrs []string
	brokers []*node
	links   *links // a replicated group's raft network (group.go)
}

type node struct {
	idx     int
	cfg     config.Config
	b       *broker.Broker // nil while stopped
	addr    string         // fixed after the first start, reused on restart
	stopped bool
}

// Start starts a name server and the brokers, and registers their shutdown
// with t.Cleanup. It fails the test if any node does not start.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	o := options{brokers: 1, namesrvs: 1}
	for _, fn := range opts {
		fn(&o)
	}
	if o.logger == nil {
		if os.Getenv("RUNNEL_TEST_LOG") != "" {
			o.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		} else {
			o.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
	}
	c := &Cluster{t: t, opts: o}
	// Store directories first: cleanups run last-in first-out, so the
	// directories must be registered before c.close to outlive the brokers.
	dirs := make([]string, o.brokers)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	t.Cleanup(c.close)
	if o.group > 0 {
		var err error
		if c.links, err = newLinks(o.group, o.raftTCP); err != nil {
			t.Fatalf("cluster: raft ports: %v", err)
		}
		if o.raftTLS {
			if c.links.certFile, c.links.keyFile, err = raftCertificate(t.TempDir()); err != nil {
				t.Fatalf("cluster: raft certificate: %v", err)
			}
		}
	}
	for i := range o.namesrvs {
		ns, err := c.startNamesrv("127.0.0.1:0")
		if err != nil {
			t.Fatalf("cluster: name server %d: %v", i, err)
		}
		c.ns = append(c.ns, ns)
		c.nsAddrs = append(c.nsAddrs, ns.Addr())
	}
	var grpcLns []net.Listener
	if o.grpc {
		var err error
		if grpcLns, err = grpcListeners(o.brokers); err != nil {
			t.Fatalf("cluster: gRPC ports: %v", err)
		}
	}
	for i := range o.brokers {
		cfg := config.Default()
		cfg.ListenAddr = "127.0.0.1:0"
		cfg.BrokerName = "broker-" + string(rune('a'+i%26)) + suffix(i)
		cfg.NamesrvAddrs = append([]string(nil), c.nsAddrs...)
		cfg.StoreDir = dirs[i]
		cfg.Logger = o.logger
		if c.links != nil {
			c.groupConfig(i, &cfg)
		}
		if o.grpc {
			grpcConfig(i, &cfg, grpcLns, c.links != nil)
		}
		if o.configure != nil {
			o.configure(i, &cfg)
		}
		n := &node{idx: i, cfg: cfg}
		c.brokers = append(c.brokers, n)
		if err := c.startNode(n); err != nil {
			t.Fatalf("cluster: broker %d: %v", i, err)
		}
	}
	return c
}

func suffix(i int) string {
	if i < 26 {
		return ""
	}
	return fmt.Sprint(i / 26)
}

func (c *Cluster) startNode(n *node) error {
	cfg := n.cfg
	if n.addr != "" {
		cfg.ListenAddr = n.addr
	}
	if c.links != nil && c.links.net != nil {
		cfg.Replication.Transport = c.links.net.Transport(n.idx)
	}
	b, err := broker.New(cfg)
	if err != nil {
		return err
	}
	// A door's listener is served once; a restart listens on its address.
	n.cfg.GRPC.Listener = nil
	if err := b.Start(); err != nil {
		_ = b.Close()
		return err
	}
	n.b = b
	n.addr = b.Addr()
	n.stopped = false
	return nil
}

func (c *Cluster) startNamesrv(addr string) (*namesrv.Server, error) {
	cfg := namesrv.DefaultConfig()
	cfg.ListenAddr = addr
	cfg.Logger = c.opts.logger
	if c.opts.nsConfig != nil {
		c.opts.nsConfig(&cfg)
	}
	ns, err := namesrv.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := ns.Start(); err != nil {
		_ = ns.Close()
		return nil, err
	}
	return ns, nil
}

// NamesrvAddr returns the (first) name server's address.
func (c *Cluster) NamesrvAddr() string { return c.NamesrvAddrs()[0] }

// NamesrvAddrs returns every name server's address; each stays the same
// across restarts.
func (c *Cluster) NamesrvAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.nsAddrs...)
}

// Namesrv returns the (first) name server (nil while it is stopped).
func (c *Cluster) Namesrv() *namesrv.Server { return c.NamesrvAt(0) }

// NamesrvAt returns name server i (nil while it is stopped).
func (c *Cluster) NamesrvAt(i int) *namesrv.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ns[i]
}

// RestartNamesrv closes name server i and starts a new one on the same
// address. The new one knows nothing: its route table fills again only as
// brokers register.
func (c *Cluster) RestartNamesrv(i int) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if ns := c.ns[i]; ns != nil {
		c.ns[i] = nil
		if err := ns.Close(); err != nil {
			c.t.Errorf("cluster: close name server %d: %v", i, err)
		}
	}
	ns, err := c.startNamesrv(c.nsAddrs[i])
	if err != nil {
		c.t.Fatalf("cluster: restart name server %d: %v", i, err)
	}
	c.ns[i] = ns
}

// Brokers returns the number of brokers, running or stopped.
func (c *Cluster) Brokers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.brokers)
}

// Broker returns broker i (nil while it is stopped).
func (c *Cluster) Broker(i int) *broker.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[i].b
}

// BrokerAddr returns broker i's address; it stays the same across restarts.
func (c *Cluster) BrokerAddr(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[i].addr
}

// BrokerName returns broker i's name.
func (c *Cluster) BrokerName(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokers[i].cfg.BrokerName
}

// StopBroker closes broker i cleanly (offsets persisted, unregistered).
func (c *Cluster) StopBroker(i int) {
	c.t.Helper()
	c.stop(i, true)
}

// KillBroker stops broker i as a crash would, as far as clients can tell
// (Broker.Abort): offsets changed since the last periodic persist are lost
// and the name servers are not told. The schedule and the store still
// close cleanly; a test of a real crash needs a broker process.
func (c *Cluster) KillBroker(i int) {
	c.t.Helper()
	c.stop(i, false)
}

func (c *Cluster) stop(i int, clean bool) {
	c.mu.Lock()
	n := c.brokers[i]
	b := n.b
	n.b, n.stopped = nil, true
	c.mu.Unlock()
	if b == nil {
		return
	}
	var err error
	if clean {
		err = b.Close()
	} else {
		err = b.Abort()
	}
	if err != nil {
		c.t.Errorf("cluster: stop broker %d: %v", i, err)
	}
}

// RestartBroker stops broker i if it runs and starts it again on the same
// address and store.
func (c *Cluster) RestartBroker(i int) {
	c.t.Helper()
	c.StopBroker(i)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.startNode(c.brokers[i]); err != nil {
		c.t.Fatalf("cluster: restart broker %d: %v", i, err)
	}
}

// ReconfigureBroker stops broker i if it runs, lets fn change its config
// (kept for later restarts), and starts it again on the same address and
// store: a slave restarted as master (BrokerID 0) of its brokerName, say.
func (c *Cluster) ReconfigureBroker(i int, fn func(cfg *config.Config)) {
	c.t.Helper()
	c.StopBroker(i)
	c.mu.Lock()
	defer c.mu.Unlock()
	fn(&c.brokers[i].cfg)
	if err := c.startNode(c.brokers[i]); err != nil {
		c.t.Fatalf("cluster: reconfigure broker %d: %v", i, err)
	}
}

func (c *Cluster) close() {
	for i := range c.brokers {
		c.stop(i, true)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ns := range c.ns {
		if ns == nil {
			continue
		}
		c.ns[i] = nil
		if err := ns.Close(); err != nil {
			c.t.Errorf("cluster: close name server %d: %v", i, err)
		}
	}
}
