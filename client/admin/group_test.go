package admin

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestConsumerGroupsFromEverySource(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	// broker-a is a Java broker: subscription group configs.
	ba.reply(protocol.ReqGetAllSubscriptionGroupConfig, protocol.RespSuccess, nil, []byte(
		`{"dataVersion":{"counter":3,"timestamp":1},"subscriptionGroupTable":{"g1":{"groupName":"g1","consumeEnable":true},"TOOLS_CONSUMER":{"groupName":"TOOLS_CONSUMER"}}}`))
	// broker-b lacks that but lists offsets, keyed topic@group with
	// fastjson integer queue keys.
	bb.reply(protocol.ReqGetAllConsumerOffset, protocol.RespSuccess, nil, []byte(
		`{"offsetTable":{"T@g2":{0:5,1:3},"%RETRY%g1@g1":{0:0}}}`))
	ns.reply(protocol.ReqGetAllTopicListFromNameServer, protocol.RespSuccess, nil, []byte(
		`{"topicList":["T","%RETRY%g3","%DLQ%g4"]}`))
	ba.on(protocol.ReqGetConsumerListByGroup, func(req *protocol.Command) *protocol.Command {
		if req.ExtFields["consumerGroup"] == "g1" {
			resp := protocol.NewResponse(req, protocol.RespSuccess, "")
			resp.Body = protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: []string{"c1", "c2"}}.Encode()
			return resp
		}
		// Java answers a group without consumers with an error code.
		return protocol.NewResponse(req, protocol.RespSystemError, "no consumer for this group")
	})
	a := newAdmin(t, ns.addr())
	groups, err := a.ConsumerGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{
		{Name: "TOOLS_CONSUMER", Brokers: []string{"broker-a"}, Consumers: 0},
		{Name: "g1", Brokers: []string{"broker-a", "broker-b"}, Consumers: 2},
		{Name: "g2", Brokers: []string{"broker-b"}, Consumers: -1}, // broker-b cannot tell
		{Name: "g3", Brokers: []string{}, Consumers: 0},            // asked the first broker
	}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("groups\n got %+v\nwant %+v", groups, want)
	}
	if n := len(ba.requests(protocol.ReqGetAllConsumerOffset)); n != 0 {
		t.Fatalf("broker-a answered 201 but was asked 43 %d times", n)
	}
	if n := len(bb.requests(protocol.ReqGetAllSubscriptionGroupConfig)); n != 1 {
		t.Fatalf("broker-b asked 201 %d times", n)
	}
}

func TestConsumerProgress(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ba.reply(protocol.ReqGetConsumeStats, protocol.RespSuccess, nil, []byte(
		`{"consumeTps":1.5,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"brokerOffset":10,"consumerOffset":4,"lastTimestamp":99},`+
			`{"brokerName":"broker-a","queueId":0,"topic":"%RETRY%g"}:{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0}}}`))
	bb.reply(protocol.ReqGetConsumeStats, protocol.RespSuccess, nil, protocol.ConsumeStats{OffsetTable: map[protocol.MessageQueue]protocol.OffsetWrapper{
		{Topic: "T", BrokerName: "broker-b", QueueID: 1}: {BrokerOffset: 3, ConsumerOffset: 5}, // ahead: lag 0, not -2
	}}.Encode())
	a := newAdmin(t, ns.addr())
	rows, err := a.ConsumerProgress(context.Background(), "g", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueProgress{
		{Topic: "%RETRY%g", Broker: "broker-a", QueueID: 0},
		{Topic: "T", Broker: "broker-a", QueueID: 0, BrokerOffset: 10, ConsumerOffset: 4, Lag: 6, LastTimestamp: 99},
		{Topic: "T", Broker: "broker-b", QueueID: 1, BrokerOffset: 3, ConsumerOffset: 5, Lag: 0},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", rows, want)
	}
	if TotalLag(rows) != 6 {
		t.Fatalf("total lag %d", TotalLag(rows))
	}
	if got := ba.requests(protocol.ReqGetConsumeStats); !reflect.DeepEqual(got[0].Ext, map[string]string{"consumerGroup": "g"}) {
		t.Fatalf("request %+v", got)
	}

	// With a topic: only the topic's brokers, and the topic in the header.
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil, routeBody("C", 1, map[string]string{"broker-b": bb.addr()}))
	rows, err = a.ConsumerProgress(context.Background(), "g", "T")
	if err != nil || len(rows) != 1 || rows[0].Broker != "broker-b" {
		t.Fatalf("rows %+v err %v", rows, err)
	}
	if got := bb.requests(protocol.ReqGetConsumeStats); !reflect.DeepEqual(got[1].Ext, map[string]string{"consumerGroup": "g", "topic": "T"}) {
		t.Fatalf("request %+v", got)
	}
	if n := len(ba.requests(protocol.ReqGetConsumeStats)); n != 1 {
		t.Fatalf("broker-a asked %d times, want 1", n)
	}

	// Nothing anywhere: not found.
	bb.reply(protocol.ReqGetConsumeStats, protocol.RespSuccess, nil, []byte(`{"consumeTps":0,"offsetTable":{}}`))
	if _, err := a.ConsumerProgress(context.Background(), "g", "T"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
}

func TestResetOffsetBrokerAndDirect(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil,
		routeBody("C", 2, map[string]string{"broker-a": ba.addr(), "broker-b": bb.addr()}))
	// broker-a has the group online and resets itself.
	ba.reply(protocol.ReqInvokeBrokerToResetOffset, protocol.RespSuccess, nil, protocol.ResetOffsetBody{OffsetTable: map[protocol.MessageQueue]int64{
		{Topic: "T", BrokerName: "broker-a", QueueID: 0}: 11,
		{Topic: "T", BrokerName: "broker-a", QueueID: 1}: 12,
	}}.Encode())
	// broker-b has the group offline: offsets are looked up and committed.
	bb.reply(protocol.ReqInvokeBrokerToResetOffset, protocol.RespConsumerNotOnline, nil, nil)
	bb.on(protocol.ReqSearchOffsetByTimestamp, func(req *protocol.Command) *protocol.Command {
		q, _ := strconv.Atoi(req.ExtFields["queueId"])
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.ExtFields = protocol.SearchOffsetResponseHeader{Offset: int64(100 + q)}.Encode()
		return resp
	})
	bb.reply(protocol.ReqUpdateConsumerOffset, protocol.RespSuccess, nil, nil)
	a := newAdmin(t, ns.addr())
	at := time.UnixMilli(1700000000123)
	rows, err := a.ResetOffset(context.Background(), "g", "T", ResetTarget{Position: ResetToTime, Time: at})
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueReset{
		{Topic: "T", Broker: "broker-a", QueueID: 0, Offset: 11, Method: ResetByBroker},
		{Topic: "T", Broker: "broker-a", QueueID: 1, Offset: 12, Method: ResetByBroker},
		{Topic: "T", Broker: "broker-b", QueueID: 0, Offset: 100, Method: ResetDirect},
		{Topic: "T", Broker: "broker-b", QueueID: 1, Offset: 101, Method: ResetDirect},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", rows, want)
	}
	wantInvoke := map[string]string{"topic": "T", "group": "g", "timestamp": "1700000000123", "isForce": "true"}
	if got := ba.requests(protocol.ReqInvokeBrokerToResetOffset); len(got) != 1 || !reflect.DeepEqual(got[0].Ext, wantInvoke) {
		t.Fatalf("invoke %+v, want %v", got, wantInvoke)
	}
	if n := len(ba.requests(protocol.ReqUpdateConsumerOffset)); n != 0 {
		t.Fatalf("broker-a got %d direct commits", n)
	}
	search := bb.requests(protocol.ReqSearchOffsetByTimestamp)
	commits := bb.requests(protocol.ReqUpdateConsumerOffset)
	if len(search) != 2 || !reflect.DeepEqual(search[1].Ext, map[string]string{"topic": "T", "queueId": "1", "timestamp": "1700000000123"}) {
		t.Fatalf("searches %+v", search)
	}
	if len(commits) != 2 || !reflect.DeepEqual(commits[1].Ext, map[string]string{"consumerGroup": "g", "topic": "T", "queueId": "1", "commitOffset": "101"}) {
		t.Fatalf("commits %+v", commits)
	}
}

func TestResetOffsetUnsupportedEarliestLatest(t *testing.T) {
	ns, ba, _ := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil, routeBody("C", 1, map[string]string{"broker-a": ba.addr()}))
	// No handler for 222: the fake answers REQUEST_CODE_NOT_SUPPORTED.
	ba.reply(protocol.ReqGetMinOffset, protocol.RespSuccess, protocol.GetMinOffsetResponseHeader{Offset: 3}.Encode(), nil)
	ba.reply(protocol.ReqGetMaxOffset, protocol.RespSuccess, protocol.GetMaxOffsetResponseHeader{Offset: 9}.Encode(), nil)
	ba.reply(protocol.ReqUpdateConsumerOffset, protocol.RespSuccess, nil, nil)
	a := newAdmin(t, ns.addr())
	for _, tc := range []struct {
		to   ResetTarget
		want int64
	}{{ResetTarget{Position: ResetToEarliest}, 3}, {ResetTarget{Position: ResetToLatest}, 9}} {
		rows, err := a.ResetOffset(context.Background(), "g", "T", tc.to)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Offset != tc.want || rows[0].Method != ResetDirect {
			t.Fatalf("%v: rows %+v", tc.to, rows)
		}
	}
	if got := ba.requests(protocol.ReqInvokeBrokerToResetOffset); len(got) != 2 || got[0].Ext["timestamp"] != "0" {
		t.Fatalf("invokes %+v (earliest must ask for timestamp 0)", got)
	}

	// Any other refusal is an error naming the broker.
	ba.reply(protocol.ReqInvokeBrokerToResetOffset, protocol.RespSystemError, nil, nil)
	_, err := a.ResetOffset(context.Background(), "g", "T", ResetTarget{Position: ResetToEarliest})
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != protocol.RespSystemError || re.Node != "broker broker-a ("+ba.addr()+")" {
		t.Fatalf("err %v", err)
	}
	if _, err := a.ResetOffset(context.Background(), "g", "T", ResetTarget{}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("zero time: %v", err)
	}
}
