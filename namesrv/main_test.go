package namesrv

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

func TestMain(m *testing.M) {
	rlog.SetLogLevel("fatal")
	leakcheck.VerifyTestMain(m, official.Leftovers...)
}

// testTransport is the remoting transport the tests serve on: netpoll, as
// in production, unless NAMESRV_TEST_TRANSPORT says otherwise ("std").
func testTransport() string {
	if tr := os.Getenv("NAMESRV_TEST_TRANSPORT"); tr != "" {
		return tr
	}
	return remoting.TransportNetpoll
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type env struct {
	srv   *Server
	clock *fakeclock.Clock
	addr  string
}

// start runs a name server on a loopback port with a fake clock and a scan
// interval long enough that only explicit ExpireBrokers calls expire
// brokers, unless mod says otherwise.
func start(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	clock := fakeclock.New(time.Unix(1_700_000_000, 0))
	cfg := DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.ScanInterval = time.Hour
	cfg.Now = clock.Now
	cfg.Logger = quietLogger()
	cfg.Transport = testTransport()
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &env{srv: srv, clock: clock, addr: srv.Addr()}
}

func newClient(t *testing.T, onClose func(addr string)) *remoting.Client {
	t.Helper()
	cfg := remoting.DefaultClientConfig()
	cfg.Logger = quietLogger()
	cfg.OnClose = onClose
	c := remoting.NewClient(cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *remoting.Client, addr string, req *protocol.Command) *protocol.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, addr, req)
	if err != nil {
		t.Fatalf("invoke code %d: %v", req.Code, err)
	}
	return resp
}

// broker describes one REGISTER_BROKER.
type broker struct {
	cluster, name, addr string
	id                  int64
	version             int64
	topics              map[string]int // topic -> queues (perm 6)
	heartbeatTimeout    int64          // ms, 0 = default
}

func (b broker) request(t *testing.T) *protocol.Command {
	t.Helper()
	table := map[string]protocol.TopicConfig{}
	for name, q := range b.topics {
		tc := topicconf.New(name)
		tc.ReadQueueNums, tc.WriteQueueNums = q, q
		table[name] = tc
	}
	body := protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
		TopicConfigTable: table,
		DataVersion:      protocol.DataVersion{Timestamp: 1, Counter: b.version},
	}}
	enc, err := body.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h := protocol.RegisterBrokerRequestHeader{
		BrokerName: b.name, BrokerAddr: b.addr, ClusterName: b.cluster, HAServerAddr: b.addr + "0",
		BrokerID: b.id, HeartbeatTimeoutMillis: b.heartbeatTimeout, BodyCRC32: protocol.BodyCRC32(enc),
	}
	return protocol.NewRequest(protocol.ReqRegisterBroker, h.Encode(), enc)
}

func (e *env) register(t *testing.T, c *remoting.Client, b broker) protocol.RegisterBrokerResponseHeader {
	t.Helper()
	resp := call(t, c, e.addr, b.request(t))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("register %s: code %d remark %q", b.addr, resp.Code, resp.Remark)
	}
	var h protocol.RegisterBrokerResponseHeader
	if err := h.Decode(resp.ExtFields); err != nil {
		t.Fatal(err)
	}
	return h
}

// route asks for topic's route; it returns nil and the code when the
// answer is not SUCCESS.
func (e *env) route(t *testing.T, c *remoting.Client, topic string) (*protocol.TopicRouteData, *protocol.Command) {
	t.Helper()
	resp := call(t, c, e.addr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
		protocol.GetRouteInfoRequestHeader{Topic: topic}.Encode(), nil))
	if resp.Code != protocol.RespSuccess {
		return nil, resp
	}
	r, err := protocol.DecodeTopicRouteData(resp.Body)
	if err != nil {
		t.Fatalf("route body %s: %v", resp.Body, err)
	}
	return r, resp
}
