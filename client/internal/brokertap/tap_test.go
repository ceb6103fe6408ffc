package brokertap_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/internal/brokertap"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// tapped starts a Runnel broker with tap in its server and returns a
// remoting client and the broker.
func tapped(t *testing.T, tap *brokertap.Tap) (*remoting.Client, *broker.Broker, string) {
	t.Helper()
	t.TempDir() // removed after the cluster's cleanup
	c := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Interceptors = append(cfg.Interceptors, tap.Interceptor())
	}))
	rc := remoting.NewClient(remoting.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = rc.Close() })
	return rc, c.Broker(0), c.BrokerAddr(0)
}

func call(t *testing.T, rc *remoting.Client, addr string, req *protocol.Command) (*protocol.Command, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return rc.Invoke(ctx, addr, req)
}

func createTopic(topic string) *protocol.Command {
	h := protocol.CreateTopicRequestHeader{Topic: topic, DefaultTopic: protocol.DefaultTopicKey, ReadQueueNums: 1,
		WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	return protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil)
}

func send(topic string) *protocol.Command {
	h := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: protocol.DefaultTopicKey,
		DefaultTopicQueueNums: 1, MaxReconsumeTimes: -1, BornTimestamp: time.Now().UnixMilli()}
	return protocol.NewRequest(protocol.ReqSendMessageV2, h.EncodeV2(), []byte("x"))
}

// TestRefuseAnswersInsteadOfTheBroker: a refused request gets the rule's
// code and remark and never reaches the broker; the rule fires its count
// only, for the requests it matches, and every request is recorded.
func TestRefuseAnswersInsteadOfTheBroker(t *testing.T) {
	tap := brokertap.New()
	rc, b, addr := tapped(t, tap)
	tap.Refuse(brokertap.Code(protocol.ReqUpdateAndCreateTopic), 1, protocol.RespSystemBusy, "busy now")
	resp, err := call(t, rc, addr, createTopic("A"))
	if err != nil || resp.Code != protocol.RespSystemBusy || resp.Remark != "busy now" {
		t.Fatalf("refused create: %v %v", resp, err)
	}
	if _, ok := b.Core().Topic("A"); ok {
		t.Fatal("the broker served a refused request")
	}
	for _, topic := range []string{"A", "B"} {
		if resp, err := call(t, rc, addr, createTopic(topic)); err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("create %s after the rule fired: %v %v", topic, resp, err)
		}
	}
	if n := tap.Count(brokertap.Code(protocol.ReqUpdateAndCreateTopic)); n != 3 {
		t.Fatalf("%d creates recorded, want 3", n)
	}

	tap.Refuse(brokertap.SendTo("A"), 2, protocol.RespSystemError, "no")
	tap.Refuse(brokertap.Sends, 1, protocol.RespSystemBusy, "later rule")
	if resp, _ := call(t, rc, addr, send("A")); resp.Code != protocol.RespSystemError {
		t.Fatalf("send to A: %v", resp)
	}
	// Rules are tried in order: B skips the A rule and meets the next.
	if resp, _ := call(t, rc, addr, send("B")); resp.Code != protocol.RespSystemBusy {
		t.Fatalf("send to B: %v", resp)
	}
	if resp, _ := call(t, rc, addr, send("A")); resp.Code != protocol.RespSystemError {
		t.Fatalf("second send to A: %v", resp)
	}
	if resp, _ := call(t, rc, addr, send("A")); resp.Code != protocol.RespSuccess {
		t.Fatalf("send to A once the rules fired: %v", resp)
	}
	if got := b.Store().MaxOffset("A", 0); got != 1 {
		t.Fatalf("A holds %d messages, want the one let through", got)
	}
	if a, all := tap.Count(brokertap.SendTo("A")), tap.Count(brokertap.Sends); a != 3 || all != 4 {
		t.Fatalf("recorded %d sends to A and %d in all, want 3 and 4", a, all)
	}
	reqs := tap.Requests(brokertap.SendTo("B"))
	if len(reqs) != 1 || string(reqs[0].Body) != "x" || reqs[0].Ext("a") != "pg" {
		t.Fatalf("recorded send to B: %v", reqs)
	}

	tap.Refuse(brokertap.Sends, 1, protocol.RespSystemBusy, "cleared")
	tap.Clear()
	if resp, _ := call(t, rc, addr, send("B")); resp.Code != protocol.RespSuccess {
		t.Fatalf("send after Clear: %v", resp)
	}
}

// TestDropClosesTheConnection: a dropped request fails its caller with a
// connection error and never reaches the broker; the next connection is
// served.
func TestDropClosesTheConnection(t *testing.T) {
	tap := brokertap.New()
	rc, b, addr := tapped(t, tap)
	tap.Drop(brokertap.Code(protocol.ReqUpdateAndCreateTopic), 1)
	if resp, err := call(t, rc, addr, createTopic("A")); !errors.Is(err, remoting.ErrConnClosed) {
		t.Fatalf("dropped create: %v %v, want ErrConnClosed", resp, err)
	}
	if _, ok := b.Core().Topic("A"); ok {
		t.Fatal("the broker served a dropped request")
	}
	if resp, err := call(t, rc, addr, createTopic("A")); err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("create on a new connection: %v %v", resp, err)
	}
}

// TestInvokeReachesTheClientOfAHeartbeat: Invoke calls a client over the
// connection its heartbeat came on, with what the broker itself would not
// send.
func TestInvokeReachesTheClientOfAHeartbeat(t *testing.T) {
	tap := brokertap.New()
	rc, _, addr := tapped(t, tap)
	ctx := context.Background()
	ask := protocol.NewRequest(protocol.ReqGetConsumerRunningInfo,
		protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: "g", ClientID: "someone@else"}.Encode(), nil)
	if _, err := tap.Invoke(ctx, "c1", ask); !errors.Is(err, brokertap.ErrNoClient) {
		t.Fatalf("Invoke before a heartbeat: %v", err)
	}
	rc.Handle(protocol.ReqGetConsumerRunningInfo, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = []byte("asked for " + req.Ext("clientId"))
		return resp
	})
	body, err := protocol.HeartbeatData{ClientID: "c1", ProducerDataSet: []protocol.ProducerData{{GroupName: "pg"}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := call(t, rc, addr, protocol.NewRequest(protocol.ReqHeartBeat, nil, body)); err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("heartbeat: %v %v", resp, err)
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := tap.Invoke(ictx, "c1", ask)
	if err != nil || resp.Code != protocol.RespSuccess || string(resp.Body) != "asked for someone@else" {
		t.Fatalf("Invoke: %v %v", resp, err)
	}
}
