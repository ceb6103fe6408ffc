// Package clitest holds what the command-line tools' tests share: a
// buffer their goroutines may write together, a server that accepts and
// never answers, and our client's producer and push consumer started for
// a test and shut down when it ends.
package clitest

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/syncbuf"
	"github.com/runnelmq/runnel/internal/teststart"
)

// Buffer is a bytes.Buffer safe for concurrent writers (a client's
// logging goroutines, a progress bar) and the test reading it.
type Buffer = syncbuf.Buffer

// SilentServer listens on a free loopback port, accepts every connection
// and never answers: a name server that hangs. It closes, with its
// connections, when the test ends.
func SilentServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	return l.Addr().String()
}

// WriteFile writes content to a file named name in a new temporary
// directory and returns its path.
func WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// quiet is a logger that writes nothing.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// ProducerConfig is our producer's config for a test: the name server,
// a unique instance name, the group and no logging.
func ProducerConfig(namesrv, instance, group string) client.ProducerConfig {
	cfg := client.DefaultProducerConfig()
	cfg.Client.NameServerAddrs, cfg.Client.InstanceName, cfg.Client.Logger = []string{namesrv}, instance, quiet
	cfg.Group = group
	return cfg
}

// ConsumerConfig is our push consumer's config for a test: the name
// server, a unique instance name, the group, no logging, a new group
// starting at the first message, and timings that keep a test short
// (rebalance every 200 ms, pulls held 1 s). The caller sets a listener.
func ConsumerConfig(namesrv, instance, group string) client.PushConsumerConfig {
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client.NameServerAddrs, cfg.Client.InstanceName, cfg.Client.Logger = []string{namesrv}, instance, quiet
	cfg.Client.RebalanceInterval = 200 * time.Millisecond
	cfg.Group = group
	cfg.ConsumeFrom = client.ConsumeFromFirstOffset
	cfg.BrokerSuspendMax = time.Second
	return cfg
}

// StartProducer starts our producer with cfg, shut down when the test ends.
func StartProducer(t testing.TB, cfg client.ProducerConfig) *client.Producer {
	t.Helper()
	p, err := client.NewProducer(cfg)
	return teststart.Started(t, p, err)
}

// StartConsumer starts our push consumer with cfg, subscribed to every
// message of topic, shut down when the test ends (an earlier Shutdown
// makes that a no-op).
func StartConsumer(t testing.TB, cfg client.PushConsumerConfig, topic string) *client.PushConsumer {
	t.Helper()
	c, err := client.NewPushConsumer(cfg)
	if err == nil {
		err = c.Subscribe(topic, "*")
	}
	return teststart.Started(t, c, err)
}
