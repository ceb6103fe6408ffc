package client

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/teststart"
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
	return teststart.Started(t, p, err)
}
