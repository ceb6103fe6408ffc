package broker

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestTopicAdmin(t *testing.T) {
	b, rc := withClient(t)
	create := func(h protocol.CreateTopicRequestHeader) *protocol.Command {
		return rc.call(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil)
	}
	ok := protocol.CreateTopicRequestHeader{Topic: "Adm", DefaultTopic: "defaultTopic", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6, TopicFilterType: "SINGLE_TAG"}
	expect(t, create(ok), protocol.RespSuccess, "")
	bad := ok
	bad.Topic = "a/b"
	expect(t, create(bad), protocol.RespSystemError, "illegal characters")
	bad = ok
	bad.Topic = "SCHEDULE_TOPIC_XXXX"
	expect(t, create(bad), protocol.RespSystemError, "conflict with system topic")
	bad = ok
	bad.WriteQueueNums = 0
	expect(t, create(bad), protocol.RespInvalidParameter, "writeQueueNums")

	resp := rc.call(protocol.ReqGetAllTopicConfig, nil, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var all protocol.TopicConfigSerializeWrapper
	if err := json.Unmarshal(resp.Body, &all); err != nil {
		t.Fatal(err)
	}
	if tc := all.TopicConfigTable["Adm"]; tc.ReadQueueNums != 3 {
		t.Fatalf("Adm in GET_ALL_TOPIC_CONFIG: %+v", tc)
	}
	if tc := all.TopicConfigTable["TBW102"]; tc.Perm != 7 || tc.WriteQueueNums != 4 {
		t.Fatalf("TBW102: %+v", tc)
	}

	for range 5 {
		expect(t, rc.send("Adm", 1, "", "m"), protocol.RespSuccess, "")
	}
	stats := callDecode(rc, protocol.ReqGetTopicStatsInfo, protocol.TopicRequestHeader{Topic: "Adm"}.Encode(), nil, protocol.DecodeTopicStatsTable)
	q1 := stats.OffsetTable[protocol.MessageQueue{Topic: "Adm", BrokerName: "broker-a", QueueID: 1}]
	if len(stats.OffsetTable) != 3 || q1.MaxOffset != 5 || q1.LastUpdateTimestamp == 0 {
		t.Fatalf("topic stats %+v", stats.OffsetTable)
	}
	expect(t, rc.call(protocol.ReqGetTopicStatsInfo, protocol.TopicRequestHeader{Topic: "Nope"}.Encode(), nil), protocol.RespTopicNotExist, "")

	expect(t, updateOffset(rc, "g", "Adm", 1, 2), protocol.RespSuccess, "")
	cs := callDecode(rc, protocol.ReqGetConsumeStats, protocol.GetConsumeStatsRequestHeader{ConsumerGroup: "g"}.Encode(), nil, protocol.DecodeConsumeStats)
	w := cs.OffsetTable[protocol.MessageQueue{Topic: "Adm", BrokerName: "broker-a", QueueID: 1}]
	if w.BrokerOffset != 5 || w.ConsumerOffset != 2 || w.LastTimestamp == 0 {
		t.Fatalf("consume stats %+v", cs.OffsetTable)
	}

	expect(t, rc.call(protocol.ReqGetBrokerRuntimeInfo, nil, nil), protocol.RespSuccess, "")

	expect(t, rc.call(protocol.ReqDeleteTopicInBroker, protocol.TopicRequestHeader{Topic: "TBW102"}.Encode(), nil), protocol.RespSystemError, "system topic")
	expect(t, rc.call(protocol.ReqDeleteTopicInBroker, protocol.TopicRequestHeader{Topic: "Adm"}.Encode(), nil), protocol.RespSuccess, "")
	if _, ok := b.core.Topic("Adm"); ok {
		t.Fatal("topic still there after delete")
	}
	if off, ok := b.ConsumerOffset("g", "Adm", 1); ok {
		t.Fatalf("offset %d kept after delete", off)
	}
}

func TestGroupAdmin(t *testing.T) {
	_, rc := withTopic(t, "GA", 2)
	expect(t, rc.heartbeat("c1", "live", protocol.BuildSubscriptionData("GA", "*")), protocol.RespSuccess, "")
	expect(t, updateOffset(rc, "offsets-only", "GA", 1, 4), protocol.RespSuccess, "")

	resp := rc.call(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var groups struct {
		SubscriptionGroupTable map[string]struct {
			GroupName string `json:"groupName"`
		} `json:"subscriptionGroupTable"`
	}
	if err := json.Unmarshal(resp.Body, &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups.SubscriptionGroupTable) != 2 || groups.SubscriptionGroupTable["live"].GroupName != "live" {
		t.Fatalf("groups %+v", groups)
	}

	resp = rc.call(protocol.ReqGetAllConsumerOffset, nil, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var offs struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(resp.Body, &offs); err != nil {
		t.Fatal(err)
	}
	if offs.OffsetTable["GA@offsets-only"]["1"] != 4 {
		t.Fatalf("offsets %+v", offs)
	}

	resp = rc.call(protocol.ReqQueryTopicConsumeByWho, map[string]string{"topic": "GA"}, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var who struct {
		GroupList []string `json:"groupList"`
	}
	if err := json.Unmarshal(resp.Body, &who); err != nil || len(who.GroupList) != 2 {
		t.Fatalf("consume by who %s: %v", resp.Body, err)
	}
}

func TestToolQueries(t *testing.T) {
	_, rc := withTopic(t, "TQ", 2)
	hb := protocol.HeartbeatData{ClientID: "c1", ProducerDataSet: []protocol.ProducerData{{GroupName: "pg"}},
		ConsumerDataSet: []protocol.ConsumerData{{GroupName: "cg", ConsumeType: protocol.ConsumePassively,
			MessageModel: protocol.MessageModelClustering, ConsumeFromWhere: protocol.ConsumeFromLastOffset,
			SubscriptionDataSet: []protocol.SubscriptionData{protocol.BuildSubscriptionData("TQ", "a || b")}}}}
	body, _ := hb.Encode()
	expect(t, rc.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess, "")

	resp := rc.call(protocol.ReqGetConsumerConnectionList, map[string]string{"consumerGroup": "cg"}, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var cc struct {
		ConnectionSet []struct {
			ClientID   string `json:"clientId"`
			ClientAddr string `json:"clientAddr"`
		} `json:"connectionSet"`
		SubscriptionTable map[string]protocol.SubscriptionData `json:"subscriptionTable"`
		MessageModel      string                               `json:"messageModel"`
	}
	if err := json.Unmarshal(resp.Body, &cc); err != nil {
		t.Fatal(err)
	}
	if len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientID != "c1" || cc.ConnectionSet[0].ClientAddr == "" ||
		cc.SubscriptionTable["TQ"].SubString != "a || b" || cc.MessageModel != "CLUSTERING" {
		t.Fatalf("consumer connection %s", resp.Body)
	}
	expect(t, rc.call(protocol.ReqGetConsumerConnectionList, map[string]string{"consumerGroup": "none"}, nil), protocol.RespConsumerNotOnline, "not online")
	resp = rc.call(protocol.ReqGetProducerConnectionList, map[string]string{"producerGroup": "pg"}, nil)
	expect(t, resp, protocol.RespSuccess, "")
	expect(t, rc.call(protocol.ReqGetProducerConnectionList, map[string]string{"producerGroup": "none"}, nil), protocol.RespSystemError, "not exist")

	resp = rc.call(protocol.ReqGetTopicConfig, map[string]string{"topic": "TQ"}, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var tc protocol.TopicConfig
	if err := json.Unmarshal(resp.Body, &tc); err != nil || tc.ReadQueueNums != 2 {
		t.Fatalf("topic config %s: %v", resp.Body, err)
	}
	expect(t, rc.call(protocol.ReqGetTopicConfig, map[string]string{"topic": "none"}, nil), protocol.RespTopicNotExist, "")

	resp = rc.call(protocol.ReqGetBrokerConfig, nil, nil)
	expect(t, resp, protocol.RespSuccess, "")
	if !strings.Contains(string(resp.Body), "brokerName=broker-a\n") || !strings.Contains(string(resp.Body), "flushDiskType=ASYNC_FLUSH\n") {
		t.Fatalf("broker config:\n%s", resp.Body)
	}
}
