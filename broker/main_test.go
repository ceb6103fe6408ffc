package broker

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/fakeclock"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// netpoll starts its pollers once per process and never stops them.
		goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"),
	)
}

func testLogger() *slog.Logger {
	if os.Getenv("RUNNEL_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newFakeClock() *fakeclock.Clock { return fakeclock.Default() }

func testConfig(t testing.TB, dir string) config.Config {
	cfg := config.Default()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.StoreDir = dir
	cfg.Logger = testLogger()
	cfg.StoreOptions = func(o *store.Options) {
		o.CacheSize = 8 << 20
		o.MemTableSize = 4 << 20
	}
	return cfg
}

// startBroker starts a broker without name servers; mod adjusts its config.
func startBroker(t testing.TB, mod func(*config.Config)) *Broker {
	t.Helper()
	return startBrokerAt(t, t.TempDir(), mod)
}

// startBrokerAt is startBroker on the store in dir, so that a test can stop
// a broker (Close or Abort; the cleanup's second Close is a no-op) and start
// another on the same store.
func startBrokerAt(t testing.TB, dir string, mod func(*config.Config)) *Broker {
	t.Helper()
	cfg := testConfig(t, dir)
	if mod != nil {
		mod(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := b.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// withClient starts a broker without name servers and a raw client to it.
func withClient(t testing.TB) (*Broker, *rawClient) {
	t.Helper()
	b := startBroker(t, nil)
	return b, newRawClient(t, b.Addr())
}

// withTopic is withClient with topic created, with queues queues.
func withTopic(t testing.TB, topic string, queues int32) (*Broker, *rawClient) {
	t.Helper()
	return withTopicConfig(t, topic, queues, nil)
}

// withTopicConfig is withTopic on a broker whose config mod changes.
func withTopicConfig(t testing.TB, topic string, queues int32, mod func(*config.Config)) (*Broker, *rawClient) {
	t.Helper()
	b := startBroker(t, mod)
	rc := newRawClient(t, b.Addr())
	rc.createTopic(topic, queues)
	return b, rc
}

// rawClient is a remoting client to one broker that records the
// broker-initiated requests it receives (notifications).
type rawClient struct {
	t    testing.TB
	cl   *remoting.Client
	addr string

	mu       sync.Mutex
	notified []string            // consumerGroup of each NOTIFY_CONSUMER_IDS_CHANGED
	resets   []*protocol.Command // RESET_CONSUMER_CLIENT_OFFSET requests
}

func newRawClient(t testing.TB, addr string) *rawClient {
	t.Helper()
	return newRawClientDial(t, addr, nil)
}

// newMemClient is a rawClient connected to b in memory (remoting.InMemory),
// with no socket: the test cuts its network with the returned Cut.
func newMemClient(t testing.TB, b *Broker) (*rawClient, *remoting.InMemory) {
	t.Helper()
	mem := remoting.NewInMemory(b.Remoting().Server())
	return newRawClientDial(t, b.Addr(), mem.Dial), mem
}

func newRawClientDial(t testing.TB, addr string, dial func(context.Context, string) (net.Conn, error)) *rawClient {
	t.Helper()
	rc := &rawClient{t: t, addr: addr}
	rc.cl = remoting.NewClient(remoting.ClientConfig{Logger: testLogger(), Dial: dial})
	rc.cl.Handle(protocol.ReqNotifyConsumerIDsChanged, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		rc.mu.Lock()
		rc.notified = append(rc.notified, req.Ext("consumerGroup"))
		rc.mu.Unlock()
		return nil
	})
	rc.cl.Handle(protocol.ReqResetConsumerClientOffset, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		rc.mu.Lock()
		rc.resets = append(rc.resets, req)
		rc.mu.Unlock()
		return nil
	})
	t.Cleanup(func() { _ = rc.cl.Close() })
	return rc
}

func (rc *rawClient) notifications() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.notified...)
}

// call sends a request and fails the test on a transport error.
func (rc *rawClient) call(code int16, ext map[string]string, body []byte) *protocol.Command {
	rc.t.Helper()
	return rc.callTimeout(code, ext, body, 15*time.Second)
}

func (rc *rawClient) callTimeout(code int16, ext map[string]string, body []byte, d time.Duration) *protocol.Command {
	rc.t.Helper()
	// The connection's own call timeout (3 s) would end the call first.
	resp, err := rc.cl.InvokeWith(context.Background(), rc.addr, protocol.NewRequest(code, ext, body), remoting.CallOptions{Timeout: d})
	if err != nil {
		rc.t.Fatalf("call %s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

// callDecode sends a request, asserts a SUCCESS answer and decodes its
// body.
func callDecode[T any](rc *rawClient, code int16, ext map[string]string, body []byte, decode func([]byte) (T, error)) T {
	rc.t.Helper()
	resp := rc.call(code, ext, body)
	expect(rc.t, resp, protocol.RespSuccess, "")
	v, err := decode(resp.Body)
	if err != nil {
		rc.t.Fatalf("%s answer: %v", protocol.RequestCodeName(code), err)
	}
	return v
}

// expect asserts a response's code and that its remark contains want.
func expect(t testing.TB, resp *protocol.Command, code int16, remark string) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("code %d (%s) remark %q, want %d (%s)", resp.Code, protocol.ResponseCodeName(resp.Code), resp.Remark, code, protocol.ResponseCodeName(code))
	}
	if !strings.Contains(resp.Remark, remark) {
		t.Fatalf("remark %q, want it to contain %q", resp.Remark, remark)
	}
}

// sendHeader returns a SEND_MESSAGE header for topic with queue q.
func sendHeader(topic string, q int32, props map[string]string) protocol.SendMessageRequestHeader {
	return protocol.SendMessageRequestHeader{
		ProducerGroup: "pg", Topic: topic, DefaultTopic: protocol.DefaultTopicKey, DefaultTopicQueueNums: 4,
		QueueID: q, BornTimestamp: time.Now().UnixMilli(), Properties: message.MarshalProperties(props),
	}
}

func (rc *rawClient) send(topic string, q int32, tag string, body string) *protocol.Command {
	rc.t.Helper()
	props := map[string]string{}
	if tag != "" {
		props[protocol.PropertyTags] = tag
	}
	return rc.call(protocol.ReqSendMessage, sendHeader(topic, q, props).Encode(), []byte(body))
}

func (rc *rawClient) createTopic(topic string, queues int32) {
	rc.t.Helper()
	resp := rc.call(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: "defaultTopic", ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6,
		TopicFilterType: protocol.TopicFilterSingleTag,
	}.Encode(), nil)
	expect(rc.t, resp, protocol.RespSuccess, "")
}

func (rc *rawClient) heartbeat(clientID, group string, subs ...protocol.SubscriptionData) *protocol.Command {
	rc.t.Helper()
	hb := protocol.HeartbeatData{ClientID: clientID, ConsumerDataSet: []protocol.ConsumerData{{
		GroupName: group, ConsumeType: protocol.ConsumePassively, MessageModel: protocol.MessageModelClustering,
		ConsumeFromWhere: protocol.ConsumeFromFirstOffset, SubscriptionDataSet: subs,
	}}}
	body, err := hb.Encode()
	if err != nil {
		rc.t.Fatal(err)
	}
	return rc.call(protocol.ReqHeartBeat, nil, body)
}

func pullHeader(group, topic string, q int32, offset int64, max int32, sysFlag int32) protocol.PullMessageRequestHeader {
	return protocol.PullMessageRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: q, QueueOffset: offset, MaxMsgNums: max,
		SysFlag: sysFlag, CommitOffset: 0, SuspendTimeoutMillis: 20000, ExpressionType: protocol.ExpressionTypeTag,
	}
}

func (rc *rawClient) resetRequests() []*protocol.Command {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*protocol.Command(nil), rc.resets...)
}

// TestCloseUnstartedLeavesNothing: a broker built and closed without
// Start (a command whose flags were wrong after all, a test of New) leaves
// no goroutine behind: its gRPC door's server runs stream workers from
// New on.
func TestCloseUnstartedLeavesNothing(t *testing.T) {
	before := goleak.IgnoreCurrent()
	cfg := testConfig(t, t.TempDir())
	cfg.GRPC.ListenAddr = "127.0.0.1:0"
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b.grpc == nil {
		t.Fatal("no gRPC door built")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := goleak.Find(before, goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait")); err != nil {
		t.Fatal(err)
	}
}
