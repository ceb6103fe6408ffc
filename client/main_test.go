package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

var instanceSeq atomic.Int64

// testClient returns a client config for nameSrv with a unique instance
// name and fast timers.
func testClient(nameSrv string) ClientConfig {
	c := DefaultClientConfig()
	c.NameServerAddrs = []string{nameSrv}
	c.InstanceName = fmt.Sprintf("test-%d", instanceSeq.Add(1))
	c.ClientIP = "127.0.0.1"
	c.Logger = discardLogger()
	c.RebalanceInterval = 500 * time.Millisecond
	c.PersistInterval = 200 * time.Millisecond
	c.HeartbeatInterval = time.Second
	c.RouteRefreshInterval = time.Second
	c.LockRenewInterval = 500 * time.Millisecond
	return c
}

func startProducer(t testing.TB, nameSrv string, mod func(*ProducerConfig)) *Producer {
	t.Helper()
	cfg := DefaultProducerConfig()
	cfg.Client = testClient(nameSrv)
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewProducer(cfg)
	return started(t, p, err)
}

// started fails t with err (making or subscribing c failed), else starts c
// and shuts it down at t's cleanup.
func started[C interface {
	Start(context.Context) error
	Shutdown(context.Context) error
}](t testing.TB, c C, err error) C {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	return c
}
