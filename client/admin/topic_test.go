package admin

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// twoBrokers starts a name server and two brokers of cluster C.
func twoBrokers(t *testing.T) (ns, ba, bb *fakeNode) {
	ns, ba, bb = startFake(t), startFake(t), startFake(t)
	ns.reply(protocol.ReqGetBrokerClusterInfo, protocol.RespSuccess, nil,
		clusterBody("C", map[string]string{"broker-a": ba.addr(), "broker-b": bb.addr()}))
	return ns, ba, bb
}

// twoBrokersCreatingTopics is twoBrokers whose brokers both accept
// UPDATE_AND_CREATE_TOPIC.
func twoBrokersCreatingTopics(t *testing.T) (ns, ba, bb *fakeNode) {
	ns, ba, bb = twoBrokers(t)
	for _, b := range []*fakeNode{ba, bb} {
		b.reply(protocol.ReqUpdateAndCreateTopic, protocol.RespSuccess, nil, nil)
	}
	return ns, ba, bb
}

func TestTopicRouteRequestAndJavaBody(t *testing.T) {
	ns := startFake(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil, routeBody("C", 4, map[string]string{"broker-a": "10.0.0.1:10911"}))
	a := newAdmin(t, ns.addr())
	route, err := a.TopicRoute(context.Background(), "T")
	if err != nil {
		t.Fatal(err)
	}
	if len(route.BrokerDatas) != 1 || route.BrokerDatas[0].MasterAddr() != "10.0.0.1:10911" ||
		len(route.QueueDatas) != 1 || route.QueueDatas[0].ReadQueueNums != 4 || route.QueueDatas[0].Perm != 6 {
		t.Fatalf("route %+v", route)
	}
	got := ns.requests(protocol.ReqGetRouteInfoByTopic)
	if want := map[string]string{"topic": "T", "acceptStandardJsonOnly": "true"}; len(got) != 1 || !reflect.DeepEqual(got[0].Ext, want) {
		t.Fatalf("request ext %+v, want %v", got, want)
	}
}

func TestCreateTopicOnEveryMaster(t *testing.T) {
	ns, ba, bb := twoBrokersCreatingTopics(t)
	a := newAdmin(t, ns.addr())
	order := true
	writes, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "orders", ReadQueueNums: 4, WriteQueueNums: 2, Order: &order})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []Node
	for _, w := range writes {
		nodes = append(nodes, w.Node)
		if !w.Created || w.Result() != "created" {
			t.Errorf("%v: created %v", w.Node, w.Created)
		}
	}
	if want := []Node{{"broker-a", ba.addr()}, {"broker-b", bb.addr()}}; !reflect.DeepEqual(nodes, want) {
		t.Fatalf("nodes %v, want %v", nodes, want)
	}
	want := map[string]string{
		"topic": "orders", "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "2",
		"perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "true",
	}
	for _, b := range []*fakeNode{ba, bb} {
		got := b.requests(protocol.ReqUpdateAndCreateTopic)
		if len(got) != 1 || !reflect.DeepEqual(got[0].Ext, want) {
			t.Fatalf("broker got %+v\nwant ext %v", got, want)
		}
		// The header must also decode the way a broker reads it.
		var h protocol.CreateTopicRequestHeader
		if err := h.Decode(got[0].Ext); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCreateTopicTargetsAndFailures(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ba.reply(protocol.ReqUpdateAndCreateTopic, protocol.RespSuccess, nil, nil)
	bb.reply(protocol.ReqUpdateAndCreateTopic, protocol.RespSystemError, nil, nil)
	a := newAdmin(t, ns.addr())
	ctx := context.Background()

	// Named broker only: broker-b is not touched.
	nodes, err := a.CreateTopic(ctx, TopicSpec{Topic: "t1", Brokers: []string{"broker-a"}})
	if err != nil || len(nodes) != 1 || nodes[0].Name != "broker-a" {
		t.Fatalf("nodes %v err %v", nodes, err)
	}
	if got := ba.requests(protocol.ReqUpdateAndCreateTopic); got[0].Ext["readQueueNums"] != "8" || got[0].Ext["perm"] != "6" {
		t.Fatalf("defaults not applied: %v", got[0].Ext)
	}
	if n := len(bb.requests(protocol.ReqUpdateAndCreateTopic)); n != 0 {
		t.Fatalf("broker-b got %d creates", n)
	}

	// The failing broker is named, with its address; the one before it is
	// reported as done.
	nodes, err = a.CreateTopic(ctx, TopicSpec{Topic: "t2", Cluster: "C"})
	var re *ResponseError
	if !errors.As(err, &re) || re.Node != "broker broker-b ("+bb.addr()+")" || !strings.Contains(err.Error(), `create topic "t2"`) {
		t.Fatalf("err %v", err)
	}
	if len(nodes) != 1 || nodes[0].Name != "broker-a" {
		t.Fatalf("done before the failure: %v", nodes)
	}

	for _, bad := range []TopicSpec{
		{Topic: "t3", Cluster: "nope"},
		{Topic: "t3", Brokers: []string{"broker-z"}},
	} {
		if _, err := a.CreateTopic(ctx, bad); !errors.Is(err, ErrNoBroker) {
			t.Errorf("%+v: err %v, want ErrNoBroker", bad, err)
		}
	}
	for _, bad := range []TopicSpec{
		{Topic: ""},
		{Topic: "a b"},
		{Topic: strings.Repeat("x", 128)},
		{Topic: "t", ReadQueueNums: -1},
		{Topic: "t", WriteQueueNums: 5000},
		{Topic: "t", Perm: 16},
	} {
		if _, err := a.CreateTopic(ctx, bad); !errors.Is(err, ErrBadArgument) {
			t.Errorf("%+v: err %v, want ErrBadArgument", bad, err)
		}
	}
}

func TestCreateTopicNeedsClusterWhenSeveral(t *testing.T) {
	ns := startFake(t)
	ns.reply(protocol.ReqGetBrokerClusterInfo, protocol.RespSuccess, nil, []byte(
		`{"brokerAddrTable":{"a":{"brokerAddrs":{0:"1.1.1.1:1"},"brokerName":"a","cluster":"C1"},"b":{"brokerAddrs":{0:"1.1.1.2:1"},"brokerName":"b","cluster":"C2"}},`+
			`"clusterAddrTable":{"C1":["a"],"C2":["b"]}}`))
	a := newAdmin(t, ns.addr())
	_, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "t"})
	if !errors.Is(err, ErrBadArgument) || !strings.Contains(err.Error(), "[C1 C2]") {
		t.Fatalf("err %v", err)
	}
}

func TestCreateTopicMasterlessGroup(t *testing.T) {
	ns := startFake(t)
	ns.reply(protocol.ReqGetBrokerClusterInfo, protocol.RespSuccess, nil, []byte(
		`{"brokerAddrTable":{"a":{"brokerAddrs":{1:"1.1.1.1:1"},"brokerName":"a","cluster":"C"}},"clusterAddrTable":{"C":["a"]}}`))
	a := newAdmin(t, ns.addr())
	_, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "t"})
	if !errors.Is(err, ErrNoBroker) || !strings.Contains(err.Error(), `"a" has no master`) {
		t.Fatalf("err %v", err)
	}
}

// An update of an existing topic keeps what the spec leaves zero: the
// broker's queue counts, order flag and sys flag stay, and the write is
// reported as an update. A broker without GET_TOPIC_CONFIG (RocketMQ 4) is
// read through the name server's route.
func TestCreateTopicKeepsAnExistingTopicsConfig(t *testing.T) {
	ns, ba, bb := twoBrokersCreatingTopics(t)
	ba.reply(protocol.ReqGetTopicConfig, protocol.RespSuccess, nil,
		[]byte(`{"topicName":"orders","readQueueNums":4,"writeQueueNums":3,"perm":6,"topicSysFlag":1,"order":true}`))
	// broker-b: unsupported, so the route says 16 queues there.
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil, routeBody("C", 16, map[string]string{"broker-b": bb.addr()}))
	a := newAdmin(t, ns.addr())
	writes, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "orders", Perm: protocol.PermRead})
	if err != nil {
		t.Fatal(err)
	}
	if len(writes) != 2 || writes[0].Created || writes[1].Created || writes[0].Result() != "updated" {
		t.Fatalf("writes %+v, want two updates", writes)
	}
	wantA := map[string]string{"topic": "orders", "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "3",
		"perm": "4", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "1", "order": "true"}
	if got := ba.requests(protocol.ReqUpdateAndCreateTopic); len(got) != 1 || !reflect.DeepEqual(got[0].Ext, wantA) {
		t.Fatalf("broker-a got %+v\nwant %v", got, wantA)
	}
	if got := bb.requests(protocol.ReqUpdateAndCreateTopic); len(got) != 1 || got[0].Ext["readQueueNums"] != "16" ||
		got[0].Ext["writeQueueNums"] != "16" || got[0].Ext["perm"] != "4" {
		t.Fatalf("broker-b got %+v, want 16/16 kept from the route", got)
	}

	// UpdateTopicPerm goes only to the brokers that have the topic.
	ns2, bc, bd := twoBrokers(t)
	bc.reply(protocol.ReqGetTopicConfig, protocol.RespSuccess, nil, []byte(`{"topicName":"t","readQueueNums":2,"writeQueueNums":2,"perm":6}`))
	bc.reply(protocol.ReqUpdateAndCreateTopic, protocol.RespSuccess, nil, nil)
	bd.reply(protocol.ReqGetTopicConfig, protocol.RespTopicNotExist, nil, nil)
	a2 := newAdmin(t, ns2.addr())
	writes, err = a2.UpdateTopicPerm(context.Background(), "t", "", nil, protocol.PermWrite)
	if err != nil || len(writes) != 1 || writes[0].Addr != bc.addr() || writes[0].ReadQueueNums != 2 || writes[0].Perm != 2 {
		t.Fatalf("update perm: %+v %v", writes, err)
	}
	if n := len(bd.requests(protocol.ReqUpdateAndCreateTopic)); n != 0 {
		t.Fatalf("broker without the topic got %d writes", n)
	}
}

func TestDeleteTopic(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil, routeBody("C", 1, map[string]string{"broker-a": ba.addr()}))
	ns.reply(protocol.ReqDeleteTopicInNameSrv, protocol.RespSuccess, nil, nil)
	for _, b := range []*fakeNode{ba, bb} {
		b.reply(protocol.ReqDeleteTopicInBroker, protocol.RespSuccess, nil, nil)
	}
	a := newAdmin(t, ns.addr())
	nodes, err := a.DeleteTopic(context.Background(), "orders", "C")
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes %v err %v", nodes, err)
	}
	for _, b := range []*fakeNode{ba, bb} {
		got := b.requests(protocol.ReqDeleteTopicInBroker)
		if len(got) != 1 || !reflect.DeepEqual(got[0].Ext, map[string]string{"topic": "orders"}) {
			t.Fatalf("broker got %+v", got)
		}
	}
	got := ns.requests(protocol.ReqDeleteTopicInNameSrv)
	if len(got) != 1 || !reflect.DeepEqual(got[0].Ext, map[string]string{"topic": "orders", "clusterName": "C"}) {
		t.Fatalf("name server got %+v", got)
	}

	// A broker that refuses stops the deletion before the name server.
	bb.reply(protocol.ReqDeleteTopicInBroker, protocol.RespSystemError, nil, nil)
	if _, err := a.DeleteTopic(context.Background(), "other", ""); err == nil || !strings.Contains(err.Error(), "broker-b") {
		t.Fatalf("err %v", err)
	}
	if n := len(ns.requests(protocol.ReqDeleteTopicInNameSrv)); n != 1 {
		t.Fatalf("name server got %d deletes, want still 1", n)
	}

	// A topic without a route is not there: nothing is deleted.
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespTopicNotExist, nil, nil)
	if _, err := a.DeleteTopic(context.Background(), "nosuch", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing topic: %v", err)
	}
	if n := len(ba.requests(protocol.ReqDeleteTopicInBroker)); n != 2 {
		t.Fatalf("broker-a got %d deletes, want still 2", n)
	}
}

func TestTopicStatsFastjsonKeys(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil,
		routeBody("C", 2, map[string]string{"broker-a": ba.addr(), "broker-b": bb.addr()}))
	// Java's fastjson writes MessageQueue keys as objects.
	ba.reply(protocol.ReqGetTopicStatsInfo, protocol.RespSuccess, nil, []byte(
		`{"offsetTable":{{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"lastUpdateTimestamp":1700000000000,"maxOffset":7,"minOffset":2},`+
			`{"brokerName":"broker-a","queueId":0,"topic":"T"}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}}}`))
	bb.reply(protocol.ReqGetTopicStatsInfo, protocol.RespSuccess, nil, protocol.TopicStatsTable{OffsetTable: map[protocol.MessageQueue]protocol.TopicOffset{
		{Topic: "T", BrokerName: "broker-b", QueueID: 0}: {MinOffset: 0, MaxOffset: 3, LastUpdateTimestamp: 5},
	}}.Encode())
	a := newAdmin(t, ns.addr())
	stats, err := a.TopicStats(context.Background(), "T")
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueStats{
		{Topic: "T", Broker: "broker-a", QueueID: 0},
		{Topic: "T", Broker: "broker-a", QueueID: 1, MinOffset: 2, MaxOffset: 7, LastUpdate: 1700000000000},
		{Topic: "T", Broker: "broker-b", QueueID: 0, MaxOffset: 3, LastUpdate: 5},
	}
	if !reflect.DeepEqual(stats, want) {
		t.Fatalf("stats\n got %+v\nwant %+v", stats, want)
	}
	if got := ba.requests(protocol.ReqGetTopicStatsInfo); !reflect.DeepEqual(got[0].Ext, map[string]string{"topic": "T"}) {
		t.Fatalf("request %+v", got)
	}

	ba.reply(protocol.ReqGetTopicStatsInfo, protocol.RespSuccess, nil, []byte(`{"offsetTable":{`))
	if _, err := a.TopicStats(context.Background(), "T"); !errors.Is(err, protocol.ErrBadBody) || !strings.Contains(err.Error(), "broker-a") {
		t.Fatalf("malformed body: %v", err)
	}
}
