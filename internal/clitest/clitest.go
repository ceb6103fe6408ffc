// Package clitest holds what the command-line tools' tests (and
// integration's) share: a buffer their goroutines may write together, a
// remoting server with the test's handlers and one that accepts and never
// answers, a request sent and its answer awaited, a tool's binary built
// for the test, a docs example block, and our client's producer and push
// consumer started for a test and shut down when it ends.
package clitest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/syncbuf"
	"github.com/runnelmq/runnel/internal/teststart"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Buffer is a bytes.Buffer safe for concurrent writers (a client's
// logging goroutines, a progress bar) and the test reading it.
type Buffer = syncbuf.Buffer

// Server starts a remoting server on a free loopback port and transport
// ("" for the default), with the handlers setup registers, logging nothing
// and closed when the test ends: a fake name server or broker.
func Server(t testing.TB, transport string, setup func(*remoting.Server)) *remoting.Server {
	t.Helper()
	srv, err := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0", Transport: transport, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	setup(srv)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

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

// FencedBlock returns the body of the first fenced block in text (a
// Markdown document) that opens with open, such as "```properties\n",
// failing the test when there is none: the docs' examples, checked
// against what the tools read.
func FencedBlock(t testing.TB, text, open string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, open)
	body, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("no block opening with %q", open)
	}
	return body
}

// GoBuild builds the Go package pkg ("." or an import path) into the file
// out with the go command of the Go running the test (the one on PATH may
// be another).
func GoBuild(pkg, out string) error {
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Build builds the Go package pkg into a binary named name in a new
// temporary directory and returns its path.
func Build(t testing.TB, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if err := GoBuild(pkg, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Call sends req to addr on a client of its own, signed with creds
// (unsigned when they are zero), as Invoke does.
func Call(t testing.TB, addr string, creds acl.Credentials, req *protocol.Command) *protocol.Command {
	t.Helper()
	c := remoting.NewClient(remoting.ClientConfig{Interceptors: creds.Interceptor()})
	defer c.Close()
	return Invoke(t, c, addr, req)
}

// Invoke sends req to addr on c and returns the answer, failing the test
// when none comes within 10 s.
func Invoke(t testing.TB, c *remoting.Client, addr string, req *protocol.Command) *protocol.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, addr, req)
	if err != nil {
		t.Fatalf("%s to %s: %v", protocol.RequestCodeName(req.Code), addr, err)
	}
	return resp
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

// StartConsumer starts our push consumer with cfg, subscribed to topic
// with expr ("*" for every message), shut down when the test ends (an
// earlier Shutdown makes that a no-op).
func StartConsumer(t testing.TB, cfg client.PushConsumerConfig, topic, expr string) *client.PushConsumer {
	t.Helper()
	c, err := client.NewPushConsumer(cfg)
	if err == nil {
		err = c.Subscribe(topic, expr)
	}
	return teststart.Started(t, c, err)
}
