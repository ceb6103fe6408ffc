package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestDecodeOffsetTable(t *testing.T) {
	a := queue.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	b := queue.MessageQueue{Topic: "T", BrokerName: "broker-b", QueueID: 3}
	for name, body := range map[string]string{
		"fastjson": `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:12,{"brokerName":"broker-b","queueId":3,"topic":"T"}:-1}}`,
		"spaced":   `{ "offsetTable" : { {"brokerName":"broker-a","queueId":0,"topic":"T"} : 12 , {"brokerName":"broker-b","queueId":3,"topic":"T"}:-1 } }`,
		"string":   `{"offsetTable":{"{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"T\"}":12,"{\"brokerName\":\"broker-b\",\"queueId\":3,\"topic\":\"T\"}":-1}}`,
		"gson":     `{"offsetTable":[[{"topic":"T","brokerName":"broker-a","queueId":0},12],[{"topic":"T","brokerName":"broker-b","queueId":3},-1]]}`,
	} {
		got, err := decodeOffsetTable([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != 2 || got[a] != 12 || got[b] != -1 {
			t.Fatalf("%s: %v", name, got)
		}
	}
	for _, bad := range []string{``, `{}`, `{"offsetTable":5}`, `{"offsetTable":{{"brokerName":"a"`, `{"offsetTable":{{"brokerName":"a","queueId":0,"topic":"T"}:x}}`, `{"offsetTable":[[1]]}`} {
		if _, err := decodeOffsetTable([]byte(bad)); err == nil {
			t.Errorf("decodeOffsetTable(%q) succeeded", bad)
		}
	}
}

func TestEncodeBatchLayout(t *testing.T) {
	msgs := []*protocol.Message{
		{Flag: 3, Body: []byte("one"), Properties: map[string]string{"TAGS": "A"}},
		{Body: bytes.Repeat([]byte{7}, 300)},
	}
	out, err := encodeBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		total := int(binary.BigEndian.Uint32(out))
		if magic := binary.BigEndian.Uint32(out[4:]); magic != 0 {
			t.Fatalf("message %d: magic %d, want 0", i, magic)
		}
		if flag := int32(binary.BigEndian.Uint32(out[12:])); flag != m.Flag {
			t.Fatalf("message %d: flag %d", i, flag)
		}
		bl := int(binary.BigEndian.Uint32(out[16:]))
		if !bytes.Equal(out[20:20+bl], m.Body) {
			t.Fatalf("message %d: body mismatch", i)
		}
		pl := int(binary.BigEndian.Uint16(out[20+bl:]))
		if got := message.UnmarshalProperties(string(out[22+bl : 22+bl+pl])); len(got) != len(m.Properties) || got["TAGS"] != m.Properties["TAGS"] {
			t.Fatalf("message %d: properties %v", i, got)
		}
		if total != 22+bl+pl {
			t.Fatalf("message %d: totalSize %d, fields end at %d", i, total, 22+bl+pl)
		}
		out = out[total:]
	}
	if len(out) != 0 {
		t.Fatalf("%d trailing bytes", len(out))
	}
}

func TestBuildRoute(t *testing.T) {
	data := &protocol.TopicRouteData{
		QueueDatas: []protocol.QueueData{
			{BrokerName: "b", ReadQueueNums: 2, WriteQueueNums: 3, Perm: 6},
			{BrokerName: "a", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 4}, // read only
			{BrokerName: "c", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}, // no master
		},
		BrokerDatas: []protocol.BrokerData{
			{BrokerName: "a", BrokerAddrs: map[int64]string{0: "x:1"}},
			{BrokerName: "b", BrokerAddrs: map[int64]string{0: "y:1"}},
			{BrokerName: "c", BrokerAddrs: map[int64]string{1: "z:1"}},
		},
	}
	r := buildRoute("T", data, 0)
	if len(r.publish) != 3 || r.publish[0].BrokerName != "b" {
		t.Fatalf("publish %v: want b's 3 writable queues only", r.publish)
	}
	if len(r.subscribe) != 8+2+1 || r.subscribe[0].BrokerName != "a" {
		t.Fatalf("subscribe %v", r.subscribe)
	}
	if capped := buildRoute("New", data, 2); len(capped.publish) != 2 || capped.publish[0].Topic != "New" {
		t.Fatalf("template route capped at 2: %v", capped.publish)
	}
}

func TestRoundRobinAvoidsLastBroker(t *testing.T) {
	mqs := []queue.MessageQueue{{BrokerName: "a"}, {BrokerName: "a", QueueID: 1}, {BrokerName: "b"}}
	var s RoundRobinSelector
	for range 20 {
		if mq := s.Select(nil, mqs, "a"); mq.BrokerName != "b" {
			t.Fatalf("retry picked %v on the failed broker", mq)
		}
	}
	only := mqs[:2]
	if mq := s.Select(nil, only, "a"); mq.BrokerName != "a" {
		t.Fatal("with one broker the retry must still go somewhere")
	}
}

func TestConfigValidationNamesTheField(t *testing.T) {
	base := func() PushConsumerConfig {
		c := DefaultPushConsumerConfig()
		c.Client.NameServerAddrs = []string{"127.0.0.1:9876"}
		c.Group = "g"
		c.Concurrently = func(context.Context, []*MessageExt) ConsumeResult { return ConsumeSuccess }
		return c
	}
	for field, mut := range map[string]func(*PushConsumerConfig){
		"Group": func(c *PushConsumerConfig) { c.Group = "bad group" },
		"Orderly": func(c *PushConsumerConfig) {
			c.Orderly = func(context.Context, []*MessageExt) OrderlyResult { return OrderlySuccess }
		},
		"PullBatchSize":         func(c *PushConsumerConfig) { c.PullBatchSize = -1 },
		"ConsumeGoroutines":     func(c *PushConsumerConfig) { c.ConsumeGoroutines = 5000 },
		"PullThresholdForQueue": func(c *PushConsumerConfig) { c.Flow.PullThresholdForQueue = 70000 },
		"NameServerAddrs":       func(c *PushConsumerConfig) { c.Client.NameServerAddrs = []string{"nohostport"} },
		"PullErrorDelay":        func(c *PushConsumerConfig) { c.PullErrorDelay = -1 },
		"InstanceName":          func(c *PushConsumerConfig) { c.Client.InstanceName = "a@b" },
	} {
		c := base()
		mut(&c)
		_, err := NewPushConsumer(c)
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v does not name it", field, err)
		}
	}
	if _, err := NewPushConsumer(base()); err != nil {
		t.Fatal(err)
	}
}

// TestZeroFieldsTakeDefaults: a config written as a struct literal, with
// only the fields the user cares about, gets the documented defaults for
// the rest, as DefaultXConfig gives them (issue 38: a zero RetryTimes
// stayed zero, so a send after a failover was never retried).
func TestZeroFieldsTakeDefaults(t *testing.T) {
	client := ClientConfig{NameServerAddrs: []string{"127.0.0.1:9876"}}
	p := ProducerConfig{Client: client}
	if err := p.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	d := DefaultProducerConfig()
	if p.RetryTimes != 2 || p.RetryTimes != d.RetryTimes || p.SendTimeout != d.SendTimeout || p.Group != d.Group ||
		p.CompressOver != d.CompressOver || p.MaxMessageSize != d.MaxMessageSize || p.DefaultTopicQueueNums != d.DefaultTopicQueueNums {
		t.Errorf("zero ProducerConfig became %+v", p)
	}
	p = ProducerConfig{Client: client, RetryTimes: -1}
	if err := p.ensureDefaults(); err != nil || p.RetryTimes != 0 {
		t.Errorf("RetryTimes -1: %d, %v; want no retry", p.RetryTimes, err)
	}
	tp := TransactionProducerConfig{ProducerConfig: ProducerConfig{Client: client},
		Listener: nopListener{}}
	prod, err := NewTransactionProducer(tp)
	if err != nil || prod.cfg.RetryTimes != 2 || prod.cfg.CheckWorkers != 1 {
		t.Errorf("zero TransactionProducerConfig: %v %+v", err, prod)
	}

	// A flow config naming one threshold keeps the others' defaults.
	c := PushConsumerConfig{Client: client, Group: "g",
		Concurrently: func(context.Context, []*MessageExt) ConsumeResult { return ConsumeSuccess }}
	c.Flow.PullThresholdForQueue = 500
	if err := c.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	want := DefaultPushConsumerConfig().Flow
	want.PullThresholdForQueue = 500
	if c.Flow != want || c.MaxReconsumeTimes != 16 || c.PullBatchSize != 32 || c.ConsumeTimeout != 15*time.Minute {
		t.Errorf("PushConsumerConfig with one flow field: %+v", c)
	}
}

type nopListener struct{}

func (nopListener) ExecuteLocal(context.Context, *Message) LocalTransactionState {
	return CommitMessage
}
func (nopListener) Check(context.Context, *MessageExt) LocalTransactionState { return CommitMessage }

func TestConsumerDataSubscribesRetryTopicInClusteringOnly(t *testing.T) {
	for _, model := range []MessageModel{Clustering, Broadcasting} {
		c := DefaultPushConsumerConfig()
		c.Client.NameServerAddrs = []string{"127.0.0.1:9876"}
		c.Group = "g"
		c.Model = model
		c.LocalOffsetDir = t.TempDir()
		c.Concurrently = func(context.Context, []*MessageExt) ConsumeResult { return ConsumeSuccess }
		pc, err := NewPushConsumer(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := pc.Subscribe("T", "A || B"); err != nil {
			t.Fatal(err)
		}
		d := pc.consumerData()
		if d.MessageModel != model.String() || d.ConsumeType != protocol.ConsumePassively {
			t.Fatalf("%v: %+v", model, d)
		}
		var topics []string
		for _, s := range d.SubscriptionDataSet {
			topics = append(topics, s.Topic)
			if s.Topic == "T" && (len(s.TagsSet) != 2 || len(s.CodeSet) != 2 || s.SubVersion == 0) {
				t.Fatalf("subscription %+v", s)
			}
		}
		want := "T"
		if model == Clustering {
			want = "%RETRY%g,T"
		}
		if strings.Join(topics, ",") != want {
			t.Fatalf("%v subscribes %v, want %s", model, topics, want)
		}
	}
}

// TestWireProperties: a single send's properties, gathered without a map,
// are what the map gives (message.MarshalProperties of properties() with
// UNIQ_KEY): a typed field over the same key in Properties, UNIQ_KEY over
// a caller's, sorted, and past the stack buffer's 512 bytes.
func TestWireProperties(t *testing.T) {
	long := strings.Repeat("v", 600)
	for name, m := range map[string]*Message{
		"none":  {Topic: "T"},
		"tags":  {Topic: "T", Tags: "a", Keys: []string{"k1", "k2"}},
		"typed": {Topic: "T", Tags: "b", DelayLevel: 3, ShardingKey: "s", Properties: map[string]string{"TAGS": "old", "DELAY": "9", "zz": "1", "A": "2"}},
		"timer": {Topic: "T", DeliverAt: time.UnixMilli(1764403200123), Properties: map[string]string{"UNIQ_KEY": "callers"}},
		"after": {Topic: "T", DeliverAfter: 1500 * time.Millisecond, Properties: map[string]string{"long": long}},
	} {
		props := m.properties()
		props[protocol.PropertyUniqClientMessageIDKey] = "ID1"
		if got, want := m.wireProperties("ID1"), message.MarshalProperties(props); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	// And as the wire has it, whatever the map path does.
	m := &Message{Topic: "T", Tags: "b", Keys: []string{"k1", "k2"}, Properties: map[string]string{"TAGS": "old", "A": "2"}}
	if got, want := m.wireProperties("ID1"), "A\x012\x02KEYS\x01k1 k2\x02TAGS\x01b\x02UNIQ_KEY\x01ID1\x02"; got != want {
		t.Errorf("wire properties %q, want %q", got, want)
	}
}
