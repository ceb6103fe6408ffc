package broker

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// fakeConsumer is a raw client that heartbeats into group as clientID and
// answers the broker's requests with the test's handlers.
func fakeConsumer(t *testing.T, addr, clientID, group string, handlers map[int16]remoting.Handler) *rawClient {
	t.Helper()
	rc := newRawClient(t, addr)
	for code, h := range handlers {
		rc.cl.Handle(code, h)
	}
	expect(t, rc.heartbeat(clientID, group, protocol.BuildSubscriptionData("CA", "*")), protocol.RespSuccess, "")
	return rc
}

func runningInfoReq(group, clientID string) map[string]string {
	return protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: group, ClientID: clientID, JstackEnable: true}.Encode()
}

func TestConsumerRunningInfoForwarded(t *testing.T) {
	b := startBroker(t, nil)
	got := make(chan map[string]string, 1)
	fakeConsumer(t, b.Addr(), "c1", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerRunningInfo: func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			got <- req.Fields()
			resp := protocol.NewResponse(req, protocol.RespSuccess, "fine")
			resp.Body = []byte(`{"properties":{"consumerGroup":"g"}}`)
			return resp
		},
	})
	admin := newRawClient(t, b.Addr())
	resp := admin.call(protocol.ReqGetConsumerRunningInfo, runningInfoReq("g", "c1"), nil)
	expect(t, resp, protocol.RespSuccess, "fine")
	if string(resp.Body) != `{"properties":{"consumerGroup":"g"}}` {
		t.Fatalf("body %s", resp.Body)
	}
	ext := <-got
	if ext["consumerGroup"] != "g" || ext["clientId"] != "c1" || ext["jstackEnable"] != "true" {
		t.Fatalf("the consumer got ext %v", ext)
	}

	// Not online: Java's remark; a client of another group is not it.
	expect(t, admin.call(protocol.ReqGetConsumerRunningInfo, runningInfoReq("g", "c2"), nil),
		protocol.RespSystemError, "The Consumer <g> <c2> not online")
	expect(t, admin.call(protocol.ReqGetConsumerRunningInfo, runningInfoReq("other", "c1"), nil),
		protocol.RespSystemError, "The Consumer <other> <c1> not online")
	expect(t, admin.call(protocol.ReqGetConsumerRunningInfo, map[string]string{"consumerGroup": "g"}, nil),
		protocol.RespSystemError, "clientId")
}

func TestConsumerRunningInfoErrorAnswerPassesThrough(t *testing.T) {
	b := startBroker(t, nil)
	fakeConsumer(t, b.Addr(), "c1", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerRunningInfo: func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			return protocol.NewResponse(req, protocol.RespSystemError, "The Consumer Group <g> not exist in this consumer")
		},
	})
	admin := newRawClient(t, b.Addr())
	expect(t, admin.call(protocol.ReqGetConsumerRunningInfo, runningInfoReq("g", "c1"), nil),
		protocol.RespSystemError, "The Consumer Group <g> not exist in this consumer")
}

// A consumer that thinks does not hold up the admin's other requests, and
// its answer still arrives.
func TestConsumerRunningInfoDoesNotBlockTheAdmin(t *testing.T) {
	b := startBroker(t, nil)
	release := make(chan struct{})
	fakeConsumer(t, b.Addr(), "c1", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerRunningInfo: func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			<-release
			resp := protocol.NewResponse(req, protocol.RespSuccess, "")
			resp.Body = []byte(`{}`)
			return resp
		},
	})
	admin := newRawClient(t, b.Addr())
	answered := make(chan *protocol.Command, 1)
	conn, err := admin.cl.Conn(context.Background(), b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.InvokeAsync(context.Background(), protocol.NewRequest(protocol.ReqGetConsumerRunningInfo, runningInfoReq("g", "c1"), nil),
		func(resp *protocol.Command, err error) {
			if err != nil {
				t.Errorf("running info: %v", err)
			}
			answered <- resp
		})
	if err != nil {
		t.Fatal(err)
	}
	// Served while the running info is outstanding, on the same connection.
	expect(t, admin.call(protocol.ReqGetBrokerConfig, nil, nil), protocol.RespSuccess, "")
	select {
	case resp := <-answered:
		t.Fatalf("answered before the consumer did: %d %s", resp.Code, resp.Remark)
	default:
	}
	close(release)
	if resp := <-answered; resp == nil || resp.Code != protocol.RespSuccess || string(resp.Body) != `{}` {
		t.Fatalf("answer %+v", resp)
	}
}

func TestConsumerRunningInfoTimeoutAndClose(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.ConsumerCallTimeout = 50 * time.Millisecond })
	release := make(chan struct{})
	fakeConsumer(t, b.Addr(), "silent", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerRunningInfo: func(context.Context, *remoting.Conn, *protocol.Command) *protocol.Command {
			<-release
			return nil
		},
	})
	t.Cleanup(func() { close(release) }) // before the client closes (cleanups run last-in first)
	fakeConsumer(t, b.Addr(), "closer", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerRunningInfo: func(_ context.Context, c *remoting.Conn, _ *protocol.Command) *protocol.Command {
			_ = c.Close()
			return nil
		},
	})
	admin := newRawClient(t, b.Addr())
	expect(t, admin.call(protocol.ReqGetConsumerRunningInfo, runningInfoReq("g", "silent"), nil),
		protocol.RespConsumeMsgTimeout, "consumer <g> <silent> Timeout")
	// The connection closing mid-call fails it at once, whatever the timeout.
	resp := admin.call(protocol.ReqGetConsumerRunningInfo, runningInfoReq("g", "closer"), nil)
	if resp.Code == protocol.RespSuccess || !strings.Contains(resp.Remark, "<g> <closer>") {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestConsumeMessageDirectlyForwardsTheStoredMessage(t *testing.T) {
	b := startBroker(t, nil)
	got := make(chan *protocol.Command, 1)
	fakeConsumer(t, b.Addr(), "c1", "g", map[int16]remoting.Handler{
		protocol.ReqConsumeMessageDirectly: func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			got <- req
			resp := protocol.NewResponse(req, protocol.RespSuccess, "")
			resp.Body = []byte(`{"order":false,"autoCommit":true,"consumeResult":0,"remark":"","spentTimeMills":1}`)
			return resp
		},
	})
	admin := newRawClient(t, b.Addr())
	admin.createTopic("CA", 1)
	sent := admin.send("CA", 0, "tagA", "hello")
	expect(t, sent, protocol.RespSuccess, "")
	msgID := sent.Ext("msgId")

	ext := map[string]string{"consumerGroup": "g", "clientId": "c1", "msgId": msgID, "topic": "CA"}
	resp := admin.call(protocol.ReqConsumeMessageDirectly, ext, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var res struct {
		ConsumeResult int  `json:"consumeResult"`
		AutoCommit    bool `json:"autoCommit"`
	}
	if err := json.Unmarshal(resp.Body, &res); err != nil || !res.AutoCommit {
		t.Fatalf("result %s: %v", resp.Body, err)
	}
	req := <-got
	if req.Ext("brokerName") != "broker-a" || req.Ext("msgId") != msgID || req.Ext("clientId") != "c1" || req.Ext("topicSysFlag") != "0" {
		t.Fatalf("ext %v", req.Fields())
	}
	msgs, err := message.DecodeMessages(req.Body)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "hello" || msgs[0].Topic != "CA" || msgs[0].OffsetMsgID != msgID {
		t.Fatalf("body: %v %+v", err, msgs)
	}

	// A well-formed id naming no message, a malformed id, a client offline.
	host, _ := netip.ParseAddrPort(b.AdvertisedAddr())
	missing := message.OffsetMsgID(host, 1<<40)
	ext["msgId"] = missing
	expect(t, admin.call(protocol.ReqConsumeMessageDirectly, ext, nil), protocol.RespSystemError, "no message with id "+missing)
	ext["msgId"] = "nonsense"
	expect(t, admin.call(protocol.ReqConsumeMessageDirectly, ext, nil), protocol.RespSystemError, "bad message id")
	ext["msgId"], ext["clientId"] = msgID, "c9"
	expect(t, admin.call(protocol.ReqConsumeMessageDirectly, ext, nil), protocol.RespSystemError, "The Consumer <g> <c9> not online")
}

func TestGetConsumerStatusGathersOnlineClients(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.ConsumerCallTimeout = 50 * time.Millisecond })
	status := func(body string) remoting.Handler {
		return func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			if req.Ext("topic") != "CA" || req.Ext("group") != "g" {
				return protocol.NewResponse(req, protocol.RespSystemError, "bad header")
			}
			resp := protocol.NewResponse(req, protocol.RespSuccess, "")
			resp.Body = []byte(body)
			return resp
		}
	}
	fakeConsumer(t, b.Addr(), "c1", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerStatusFromClient: status(`{"messageQueueTable":{{"brokerName":"broker-a","queueId":0,"topic":"CA"}:7}}`),
	})
	fakeConsumer(t, b.Addr(), "c2", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerStatusFromClient: status(`{"messageQueueTable":{}}`),
	})
	release := make(chan struct{})
	fakeConsumer(t, b.Addr(), "silent", "g", map[int16]remoting.Handler{
		protocol.ReqGetConsumerStatusFromClient: func(context.Context, *remoting.Conn, *protocol.Command) *protocol.Command {
			<-release
			return nil
		},
	})
	t.Cleanup(func() { close(release) })
	admin := newRawClient(t, b.Addr())
	ask := func(clientAddr string) *protocol.Command {
		return admin.call(protocol.ReqInvokeBrokerToGetConsumerStatus, map[string]string{"topic": "CA", "group": "g", "clientAddr": clientAddr}, nil)
	}
	resp := ask("")
	expect(t, resp, protocol.RespSuccess, "")
	want := `{"messageQueueTable":{},"consumerTable":{"c1":{{"brokerName":"broker-a","queueId":0,"topic":"CA"}:7},"c2":{}}}`
	if string(resp.Body) != want {
		t.Fatalf("body\n%s\nwant\n%s", resp.Body, want)
	}
	resp = ask("c2")
	expect(t, resp, protocol.RespSuccess, "")
	if string(resp.Body) != `{"messageQueueTable":{},"consumerTable":{"c2":{}}}` {
		t.Fatalf("only c2: %s", resp.Body)
	}
	expect(t, admin.call(protocol.ReqInvokeBrokerToGetConsumerStatus, map[string]string{"topic": "CA", "group": "none"}, nil),
		protocol.RespSystemError, "No Any Consumer online in the consumer group: [none]")
}
