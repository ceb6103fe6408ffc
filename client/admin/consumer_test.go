package admin

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestConsumerConnectionsMergedOverBrokers(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ba.reply(protocol.ReqGetConsumerConnectionList, protocol.RespSuccess, nil, []byte(
		`{"connectionSet":[{"clientId":"c1","clientAddr":"10.0.0.1:5000","language":"GO","version":317},`+
			`{"clientId":"c2","clientAddr":"10.0.0.2:5000","language":"JAVA","version":400}],`+
			`"subscriptionTable":{"T":{"topic":"T","subString":"a || b","tagsSet":["a","b"],"codeSet":[97,98],"expressionType":"TAG"}},`+
			`"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET"}`))
	bb.reply(protocol.ReqGetConsumerConnectionList, protocol.RespSuccess, nil, []byte(
		`{"connectionSet":[{"clientId":"c1","clientAddr":"10.0.0.1:5001","language":"GO","version":317}],`+
			`"subscriptionTable":{"U":{"topic":"U","subString":"*","tagsSet":[],"codeSet":["1"]}},`+
			`"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET"}`))
	a := newAdmin(t, ns.addr())
	cc, err := a.ConsumerConnections(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	want := &ConsumerConnection{Group: "g", ConsumeType: "CONSUME_PASSIVELY", MessageModel: "CLUSTERING",
		ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
		// the fake brokers say no protocol, as Java's do: remoting
		Clients: []ConsumerClient{
			{ClientID: "c1", Addr: "10.0.0.1:5000", Language: "GO", Version: 317, Protocol: "remoting", Brokers: []string{"broker-a", "broker-b"}},
			{ClientID: "c2", Addr: "10.0.0.2:5000", Language: "JAVA", Version: 400, Protocol: "remoting", Brokers: []string{"broker-a"}},
		},
		Subscriptions: []Subscription{
			{Topic: "T", Expression: "a || b", ExpressionType: "TAG", Tags: []string{"a", "b"}},
			{Topic: "U", Expression: "*", Tags: []string{}},
		},
	}
	if !reflect.DeepEqual(cc, want) {
		t.Fatalf("connections\n got %+v\nwant %+v", cc, want)
	}
	if r := ba.requests(protocol.ReqGetConsumerConnectionList); len(r) != 1 || r[0].Ext["consumerGroup"] != "g" {
		t.Fatalf("requests %+v", r)
	}

	// Nobody online anywhere: Java's CONSUMER_NOT_ONLINE from both.
	ba.reply(protocol.ReqGetConsumerConnectionList, protocol.RespConsumerNotOnline, nil, nil)
	bb.reply(protocol.ReqGetConsumerConnectionList, protocol.RespConsumerNotOnline, nil, nil)
	if _, err := a.ConsumerConnections(context.Background(), "g"); !errors.Is(err, ErrNotOnline) {
		t.Fatalf("err %v, want ErrNotOnline", err)
	}
}

func TestConsumerRunningInfoTriesBrokersUntilOneHasTheClient(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ba.on(protocol.ReqGetConsumerRunningInfo, func(req *protocol.Command) *protocol.Command {
		return protocol.NewResponse(req, protocol.RespSystemError, "The Consumer <g> <c1> not online")
	})
	bb.on(protocol.ReqGetConsumerRunningInfo, func(req *protocol.Command) *protocol.Command {
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = []byte(`{"properties":{"consumeType":"CONSUME_PASSIVELY"},"subscriptionSet":[],"mqTable":{},"statusTable":{},"jstack":""}`)
		return resp
	})
	a := newAdmin(t, ns.addr())
	ri, err := a.ConsumerRunningInfo(context.Background(), "g", "c1", true)
	if err != nil {
		t.Fatal(err)
	}
	if ri.Broker.Name != "broker-b" || ri.Properties["consumeType"] != "CONSUME_PASSIVELY" || ri.ClientID != "c1" {
		t.Fatalf("running info %+v", ri)
	}
	r := bb.requests(protocol.ReqGetConsumerRunningInfo)
	if len(r) != 1 || r[0].Ext["consumerGroup"] != "g" || r[0].Ext["clientId"] != "c1" || r[0].Ext["jstackEnable"] != "true" {
		t.Fatalf("requests %+v", r)
	}

	// The client's own refusal is an error, not a reason to try elsewhere.
	bb.on(protocol.ReqGetConsumerRunningInfo, func(req *protocol.Command) *protocol.Command {
		return protocol.NewResponse(req, protocol.RespSystemError, "The Consumer Group <g> not exist in this consumer")
	})
	var re *ResponseError
	if _, err := a.ConsumerRunningInfo(context.Background(), "g", "c1", false); !errors.As(err, &re) || re.Code != protocol.RespSystemError {
		t.Fatalf("err %v", err)
	}
	ba.on(protocol.ReqGetConsumerRunningInfo, func(req *protocol.Command) *protocol.Command {
		return protocol.NewResponse(req, protocol.RespSystemError, "The Consumer <g> <c1> not online")
	})
	bb.on(protocol.ReqGetConsumerRunningInfo, func(req *protocol.Command) *protocol.Command {
		return protocol.NewResponse(req, protocol.RespSystemError, "The Consumer <g> <c1> not online")
	})
	if _, err := a.ConsumerRunningInfo(context.Background(), "g", "c1", false); !errors.Is(err, ErrNotOnline) {
		t.Fatalf("err %v, want ErrNotOnline", err)
	}
	if _, err := a.ConsumerRunningInfo(context.Background(), "g", " ", false); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("err %v, want ErrBadArgument", err)
	}
}

// The three writers of ConsumerRunningInfo: Runnel's client, the official
// Go client (an unescaped goroutine dump, "dropped", string code sets) and
// Java (fastjson, "droped", TreeMap order).
func TestDecodeRunningInfoDialects(t *testing.T) {
	q0 := ProcessQueue{Topic: "T", Broker: "broker-a", QueueID: 0, CommitOffset: 5, CachedMsgMinOffset: 5,
		CachedMsgMaxOffset: 7, CachedMsgCount: 3, Locked: true, Dropped: true, LastPullTimestamp: 100, LastConsumeTime: 90}
	for _, tc := range []struct {
		name, body string
		stack      string
	}{
		{"runnel", `{"properties":{"consumerGroup":"g"},"subscriptionSet":[{"classFilterMode":false,"topic":"T","subString":"*","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"TAG"}],` +
			`"mqTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"commitOffset":5,"cachedMsgMinOffset":5,"cachedMsgMaxOffset":7,"cachedMsgCount":3,"cachedMsgSizeInMiB":0,"locked":true,"droped":true,"lastPullTimestamp":100,"lastConsumeTimestamp":90}},"statusTable":{},"jstack":""}`, ""},
		{"official", `{"properties":{"consumerGroup":"g"},"statusTable":{"T":{"pullRT":1.5,"pullTPS":2,"consumeRT":0,"consumeOKTPS":3,"consumeFailedTPS":0,"consumeFailedMsgs":4}},` +
			`"subscriptionSet":[{"classFilterMode":false,"topic":"T","subString":"*","tagsSet":[],"codeSet":["1"],"subVersion":1,"expressionType":"TAG"}],` +
			`"mqTable":{{"topic":"T","brokerName":"broker-a","queueId":0}:{"commitOffset":5,"cachedMsgMinOffset":5,"cachedMsgMaxOffset":7,"cachedMsgCount":3,"cachedMsgSizeInMiB":0,"transactionMsgMinOffset":0,"transactionMsgMaxOffset":0,"transactionMsgCount":0,"locked":true,"tryUnlockTimes":0,"lastLockTimestamp":0,"dropped":true,"lastPullTimestamp":100,"lastConsumeTimestamp":90}}, "jstack":"goroutine 1 [running]:
	main.main()
" }`, "goroutine 1 [running]:\n\tmain.main()\n"},
		{"java", `{"jstack":"","mqTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"cachedMsgCount":3,"cachedMsgMaxOffset":7,"cachedMsgMinOffset":5,"cachedMsgSizeInMiB":0,"commitOffset":5,"droped":true,"lastConsumeTimestamp":90,"lastLockTimestamp":0,"lastPullTimestamp":100,"locked":true,"transactionMsgCount":0,"transactionMsgMaxOffset":0,"transactionMsgMinOffset":0,"tryUnlockTimes":0}},` +
			`"properties":{"consumerGroup":"g"},"statusTable":{"T":{"consumeFailedMsgs":4,"consumeFailedTPS":0.0,"consumeOKTPS":3.0,"consumeRT":0.0,"pullRT":1.5,"pullTPS":2.0}},` +
			`"subscriptionSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1,"tagsSet":[],"topic":"T"}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ri, err := decodeRunningInfo([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(ri.Queues) != 1 || ri.Queues[0] != q0 {
				t.Fatalf("queues %+v", ri.Queues)
			}
			if ri.Properties["consumerGroup"] != "g" || len(ri.Subscriptions) != 1 || ri.Subscriptions[0].Topic != "T" || ri.Stack != tc.stack {
				t.Fatalf("info %+v", ri)
			}
			if tc.name != "runnel" && ri.Status["T"] != (ConsumeStatus{PullRT: 1.5, PullTPS: 2, ConsumeOKTPS: 3, ConsumeFailedMsgs: 4}) {
				t.Fatalf("status %+v", ri.Status)
			}
		})
	}
	for _, bad := range []string{`{"mqTable":{{"topic":"T"`, `{"mqTable":{"x":{}}}`, `{"properties":"x`, `]`} {
		if _, err := decodeRunningInfo([]byte(bad)); err == nil {
			t.Errorf("decoded %s", bad)
		}
	}
}

func TestConsumeMessageDirectlyGoesToTheStoringBroker(t *testing.T) {
	b := startFake(t)
	b.on(protocol.ReqConsumeMessageDirectly, func(req *protocol.Command) *protocol.Command {
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = []byte(`{"order":false,"autoCommit":true,"consumeResult":1,"remark":"","spentTimeMills":3}`)
		return resp
	})
	host, err := netip.ParseAddrPort(b.addr())
	if err != nil {
		t.Fatal(err)
	}
	id := message.OffsetMsgID(host, 42)
	a := newAdmin(t, "127.0.0.1:1") // the name server is never asked
	res, err := a.ConsumeMessageDirectly(context.Background(), "g", "c1", id)
	if err != nil {
		t.Fatal(err)
	}
	if *res != (DirectResult{AutoCommit: true, Result: "CR_LATER", SpentTime: 3}) {
		t.Fatalf("result %+v", res)
	}
	r := b.requests(protocol.ReqConsumeMessageDirectly)
	if len(r) != 1 || r[0].Ext["msgId"] != id || r[0].Ext["clientId"] != "c1" || r[0].Ext["consumerGroup"] != "g" {
		t.Fatalf("requests %+v", r)
	}
	if _, err := a.ConsumeMessageDirectly(context.Background(), "g", "c1", "nonsense"); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("err %v", err)
	}
}
