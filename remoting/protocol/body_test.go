package protocol

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	jsoniter "github.com/json-iterator/go"
	"github.com/tidwall/gjson"

	"github.com/runnelmq/runnel/message"
)

func TestHeartbeatDecode(t *testing.T) {
	// As the official Go client sends it (fact sheet 5.1): codeSet as strings.
	goBody := `{"clientID":"192.0.2.2@20386","producerDataSet":[{"groupName":"pg1"}],
	 "consumerDataSet":[{"groupName":"g1","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",
	   "consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","unitMode":false,"subscriptionDataSet":[
	    {"classFilterMode":false,"topic":"T1","subString":"TagA || TagB","tagsSet":["TagA","TagB"],
	     "codeSet":["2598919","2598920"],"subVersion":1795934944747278011,"expressionType":"TAG"},
	    {"classFilterMode":false,"topic":"%RETRY%g1","subString":"*","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"TAG"}]}]}`
	hb, err := DecodeHeartbeatData([]byte(goBody))
	if err != nil {
		t.Fatal(err)
	}
	want := &HeartbeatData{
		ClientID:        "192.0.2.2@20386",
		ProducerDataSet: []ProducerData{{GroupName: "pg1"}},
		ConsumerDataSet: []ConsumerData{{
			GroupName: "g1", ConsumeType: ConsumePassively, MessageModel: MessageModelClustering,
			ConsumeFromWhere: ConsumeFromFirstOffset,
			SubscriptionDataSet: []SubscriptionData{
				{Topic: "T1", SubString: "TagA || TagB", TagsSet: []string{"TagA", "TagB"},
					CodeSet: CodeSet{2598919, 2598920}, SubVersion: 1795934944747278011, ExpressionType: "TAG"},
				{Topic: "%RETRY%g1", SubString: "*", TagsSet: []string{}, CodeSet: CodeSet{}, SubVersion: 1, ExpressionType: "TAG"},
			},
		}},
	}
	if !reflect.DeepEqual(hb, want) {
		t.Fatalf("got  %+v\nwant %+v", hb, want)
	}
	// Java 5 style: numeric codes, null sets, V2 fields.
	javaBody := `{"clientID":"10.0.0.1@1","consumerDataSet":[{"groupName":"g","subscriptionDataSet":[
	  {"topic":"T","subString":"A","tagsSet":["A"],"codeSet":[65],"expressionType":"TAG"},
	  {"topic":"U","subString":"*","tagsSet":null,"codeSet":null}]}],
	  "producerDataSet":[],"heartbeatFingerprint":-5,"isWithoutSub":true}`
	hb, err = DecodeHeartbeatData([]byte(javaBody))
	if err != nil {
		t.Fatal(err)
	}
	subs := hb.ConsumerDataSet[0].SubscriptionDataSet
	if !reflect.DeepEqual(subs[0].CodeSet, CodeSet{65}) || subs[1].CodeSet != nil || hb.HeartbeatFingerprint != -5 || !hb.WithoutSub {
		t.Errorf("java heartbeat %+v", hb)
	}
	// Round trip, with nil sets encoded as [].
	out, err := want.Encode()
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeHeartbeatData(out)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("round trip %+v %v", again, err)
	}
	empty, _ := HeartbeatData{ClientID: "c", ConsumerDataSet: []ConsumerData{{SubscriptionDataSet: []SubscriptionData{{Topic: "T"}}}}}.Encode()
	if want := `{"clientID":"c","producerDataSet":[],"consumerDataSet":[{"groupName":"","consumeType":"","messageModel":"","consumeFromWhere":"","subscriptionDataSet":[{"classFilterMode":false,"topic":"T","subString":"","tagsSet":[],"codeSet":[],"subVersion":0,"expressionType":""}],"unitMode":false}]}`; string(empty) != want {
		t.Errorf("encode\n %s\nwant\n %s", empty, want)
	}
	for _, bad := range []string{"", "{", `{"consumerDataSet":[{"subscriptionDataSet":[{"codeSet":["x"]}]}]}`, `{"consumerDataSet":[{"subscriptionDataSet":[{"codeSet":[{}]}]}]}`} {
		if _, err := DecodeHeartbeatData([]byte(bad)); !errors.Is(err, ErrBadBody) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestLockBodies(t *testing.T) {
	// The request exactly as the official client writes it (fact sheet 2.3.8).
	req, err := DecodeLockBatchRequestBody([]byte(`{"consumerGroup":"g2","clientId":"192.0.2.2@20386","mqSet":[{"topic":"T2","brokerName":"broker-a","queueId":0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	mq := MessageQueue{Topic: "T2", BrokerName: "broker-a", QueueID: 0}
	if req.ConsumerGroup != "g2" || req.ClientID != "192.0.2.2@20386" || len(req.MQSet) != 1 || req.MQSet[0] != mq {
		t.Fatalf("%+v", req)
	}
	// The response as the official client reads it: jsoniter into its own struct.
	body := LockBatchResponseBody{LockOKMQSet: []MessageQueue{mq, {Topic: "T2", BrokerName: "broker-a", QueueID: 3}}}.Encode()
	var official struct {
		MQs []primitive.MessageQueue `json:"lockOKMQSet"`
	}
	if err := jsoniter.Unmarshal(body, &official); err != nil {
		t.Fatal(err)
	}
	if len(official.MQs) != 2 || official.MQs[1] != (primitive.MessageQueue{Topic: "T2", BrokerName: "broker-a", QueueId: 3}) {
		t.Errorf("client read %+v", official.MQs)
	}
	if got := string(LockBatchResponseBody{}.Encode()); got != `{"lockOKMQSet":[]}` {
		t.Errorf("empty: %s", got)
	}
	back, err := DecodeLockBatchResponseBody(body)
	if err != nil || len(back.LockOKMQSet) != 2 {
		t.Errorf("%+v %v", back, err)
	}
	if got := string(LockBatchRequestBody{ConsumerGroup: "g", ClientID: "c"}.Encode()); got != `{"consumerGroup":"g","clientId":"c","mqSet":[]}` {
		t.Errorf("request encode: %s", got)
	}
}

func TestConsumerListBody(t *testing.T) {
	body := GetConsumerListByGroupResponseBody{ConsumerIDList: []string{"10.0.0.1@1", "10.0.0.2@ü"}}.Encode()
	// Read the way the official client reads it.
	arr := gjson.ParseBytes(body).Get("consumerIdList").Array()
	if len(arr) != 2 || arr[0].String() != "10.0.0.1@1" || arr[1].String() != "10.0.0.2@ü" {
		t.Errorf("gjson read %v from %s", arr, body)
	}
	if got := string(GetConsumerListByGroupResponseBody{}.Encode()); got != `{"consumerIdList":[]}` {
		t.Errorf("empty: %s", got)
	}
	var b GetConsumerListByGroupResponseBody
	if err := b.Decode(body); err != nil || len(b.ConsumerIDList) != 2 {
		t.Errorf("%+v %v", b, err)
	}
}

func TestStatsBodies(t *testing.T) {
	cs := ConsumeStats{ConsumeTPS: 1.5, OffsetTable: map[MessageQueue]OffsetWrapper{
		{Topic: "T", BrokerName: "b", QueueID: 1}: {BrokerOffset: 10, ConsumerOffset: 8, PullOffset: 9, LastTimestamp: 1700000000000},
		{Topic: "T", BrokerName: "b", QueueID: 0}: {BrokerOffset: 5},
	}}
	out := cs.Encode()
	want := `{"consumeTps":1.5,"offsetTable":{` +
		`{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":5,"consumerOffset":0,"pullOffset":0,"lastTimestamp":0},` +
		`{"brokerName":"b","queueId":1,"topic":"T"}:{"brokerOffset":10,"consumerOffset":8,"pullOffset":9,"lastTimestamp":1700000000000}}}`
	if string(out) != want {
		t.Errorf("encode\n %s\nwant\n %s", out, want)
	}
	back, err := DecodeConsumeStats(out)
	if err != nil || !reflect.DeepEqual(*back, cs) {
		t.Errorf("round trip %+v %v", back, err)
	}
	// As Java's fastjson writes it, with spacing and a quoted-object key.
	java := ` {"consumeTps":0.0, "offsetTable":{ {"brokerName":"b","queueId":2,"topic":"T"} : {"brokerOffset":3,"consumerOffset":1,"lastTimestamp":7},
	  "{\"brokerName\":\"b\",\"queueId\":3,\"topic\":\"T\"}":{"brokerOffset":4}}} `
	back, err = DecodeConsumeStats([]byte(java))
	if err != nil || len(back.OffsetTable) != 2 || back.OffsetTable[MessageQueue{Topic: "T", BrokerName: "b", QueueID: 2}].LastTimestamp != 7 ||
		back.OffsetTable[MessageQueue{Topic: "T", BrokerName: "b", QueueID: 3}].BrokerOffset != 4 {
		t.Errorf("java body: %+v %v", back, err)
	}

	ts := TopicStatsTable{OffsetTable: map[MessageQueue]TopicOffset{{Topic: "T", BrokerName: "b"}: {MinOffset: 1, MaxOffset: 9, LastUpdateTimestamp: 5}}}
	out = ts.Encode()
	if want := `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"minOffset":1,"maxOffset":9,"lastUpdateTimestamp":5}}}`; string(out) != want {
		t.Errorf("topic stats %s", out)
	}
	tb, err := DecodeTopicStatsTable(out)
	if err != nil || !reflect.DeepEqual(*tb, ts) {
		t.Errorf("round trip %+v %v", tb, err)
	}
	if got := string(TopicStatsTable{}.Encode()); got != `{"offsetTable":{}}` {
		t.Errorf("empty: %s", got)
	}
	for _, bad := range []string{"", "{", `{"offsetTable":{1:{}}}`, `{"offsetTable":{{"queueId":"x"}:{}}}`, `{"offsetTable":{}} x`, `{"consumeTps":"a"}`} {
		if _, err := DecodeConsumeStats([]byte(bad)); !errors.Is(err, ErrBadBody) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// officialParseResetOffset repeats the official client's reading of a
// RESET_CONSUMER_CLIENT_OFFSET body (internal/model.go parseFastJsonFormat,
// which cannot be imported): gjson finds offsetTable, then the text is split
// on ",{" and "}:".
func officialParseResetOffset(t *testing.T, body []byte) map[primitive.MessageQueue]int64 {
	t.Helper()
	if gjson.ValidBytes(body) {
		t.Fatalf("body %s is valid JSON; the client would take its gson path", body)
	}
	out := map[primitive.MessageQueue]int64{}
	offsetStr := gjson.Get(string(body), "offsetTable").String()
	if len(offsetStr) <= 2 {
		return out
	}
	for _, v := range strings.Split(offsetStr[2:len(offsetStr)-1], ",{") {
		tuple := strings.Split(v, "}:")
		off, err := strconv.Atoi(tuple[1])
		if err != nil {
			t.Fatalf("offset %q: %v", tuple[1], err)
		}
		var q primitive.MessageQueue
		if err := json.Unmarshal([]byte("{"+tuple[0]+"}"), &q); err != nil {
			t.Fatalf("queue %q: %v", tuple[0], err)
		}
		out[q] = int64(off)
	}
	return out
}

func TestResetOffsetBody(t *testing.T) {
	rb := ResetOffsetBody{OffsetTable: map[MessageQueue]int64{
		{Topic: "T", BrokerName: "b", QueueID: 1}:         7,
		{Topic: "T", BrokerName: "b", QueueID: 0}:         5,
		{Topic: "%RETRY%g", BrokerName: "b2", QueueID: 0}: 0,
	}}
	body := rb.Encode()
	got := officialParseResetOffset(t, body)
	if len(got) != 3 || got[primitive.MessageQueue{Topic: "T", BrokerName: "b", QueueId: 1}] != 7 ||
		got[primitive.MessageQueue{Topic: "T", BrokerName: "b", QueueId: 0}] != 5 {
		t.Errorf("client would read %v from %s", got, body)
	}
	back, err := DecodeResetOffsetBody(body)
	if err != nil || !reflect.DeepEqual(*back, rb) {
		t.Errorf("round trip %+v %v", back, err)
	}
}

// TestMessageQueueStringAndOrder: String is the official client's (and
// Java's) MessageQueue.toString, which hash allocation hashes; the order is
// topic, broker name, then the queue id as a number.
func TestMessageQueueStringAndOrder(t *testing.T) {
	for _, mq := range []MessageQueue{{Topic: "T", BrokerName: "broker-a", QueueID: 3}, {Topic: "%RETRY%g", BrokerName: "b", QueueID: 12}} {
		official := &primitive.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueId: int(mq.QueueID)}
		if got, want := mq.String(), official.String(); got != want {
			t.Fatalf("String() = %q, official %q", got, want)
		}
	}
	q := func(topic, broker string, id int32) MessageQueue {
		return MessageQueue{Topic: topic, BrokerName: broker, QueueID: id}
	}
	in := []MessageQueue{q("b", "x", 0), q("a", "y", 1), q("a", "x", 10), q("a", "x", 2), q("a", "y", 0)}
	want := []MessageQueue{q("a", "x", 2), q("a", "x", 10), q("a", "y", 0), q("a", "y", 1), q("b", "x", 0)}
	slices.SortFunc(in, message.CompareQueues)
	if !slices.Equal(in, want) {
		t.Fatalf("sorted %v, want %v", in, want)
	}
	if message.CompareQueues(want[0], want[0]) != 0 {
		t.Fatal("a queue is not equal to itself")
	}
}
