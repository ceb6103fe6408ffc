package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/topicconf"
)

func TestRegisterBrokerRequestHeaderRoundTrip(t *testing.T) {
	h := RegisterBrokerRequestHeader{
		BrokerName: "broker-a", BrokerAddr: "10.0.0.1:10911", ClusterName: "DefaultCluster",
		HAServerAddr: "10.0.0.1:10912", BrokerID: 1, HeartbeatTimeoutMillis: 30000,
		EnableActingMaster: true, BodyCRC32: 1274296614,
	}
	ext := h.Encode()
	for k, want := range map[string]string{"brokerId": "1", "heartbeatTimeoutMillis": "30000", "compressed": "false",
		"enableActingMaster": "true", "bodyCrc32": "1274296614"} {
		if ext[k] != want {
			t.Errorf("ext[%s] = %q, want %q", k, ext[k], want)
		}
	}
	var back RegisterBrokerRequestHeader
	if err := back.Decode(ext); err != nil {
		t.Fatal(err)
	}
	if back != h {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, h)
	}
}

func TestRegisterBrokerRequestHeaderDecodeErrors(t *testing.T) {
	full := func() map[string]string {
		return map[string]string{"brokerName": "b", "brokerAddr": "a:1", "clusterName": "c", "brokerId": "0"}
	}
	tests := []struct {
		name   string
		mutate func(map[string]string)
		field  string // "" = no error
	}{
		{"minimal ok", func(map[string]string) {}, ""},
		{"no brokerName", func(m map[string]string) { delete(m, "brokerName") }, "brokerName"},
		{"no brokerAddr", func(m map[string]string) { delete(m, "brokerAddr") }, "brokerAddr"},
		{"no clusterName", func(m map[string]string) { delete(m, "clusterName") }, "clusterName"},
		{"no brokerId", func(m map[string]string) { delete(m, "brokerId") }, "brokerId"},
		{"empty brokerId", func(m map[string]string) { m["brokerId"] = "" }, "brokerId"},
		{"bad brokerId", func(m map[string]string) { m["brokerId"] = "zero" }, "brokerId"},
		{"bad timeout", func(m map[string]string) { m["heartbeatTimeoutMillis"] = "1.5" }, "heartbeatTimeoutMillis"},
		{"bad crc", func(m map[string]string) { m["bodyCrc32"] = "x" }, "bodyCrc32"},
		{"Java boolean spelling", func(m map[string]string) { m["compressed"] = "TRUE" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ext := full()
			tt.mutate(ext)
			var h RegisterBrokerRequestHeader
			err := h.Decode(ext)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var he *HeaderError
			if !errors.As(err, &he) || he.Field != tt.field || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want a HeaderError naming %s", err, tt.field)
			}
		})
	}
	var h RegisterBrokerRequestHeader
	if err := h.Decode(map[string]string{"brokerName": "b", "brokerAddr": "a:1", "clusterName": "c", "brokerId": "0", "compressed": "TRUE"}); err != nil || !h.Compressed {
		t.Fatalf("compressed=TRUE: %v %+v", err, h)
	}
	if err := h.Decode(nil); !errors.Is(err, ErrMissingField) {
		t.Fatalf("nil ext: %v", err)
	}
}

// checkRoundTrip fails t unless h, decoded from its own Encode, is h.
func checkRoundTrip[H interface {
	comparable
	Encode() map[string]string
}, P interface {
	*H
	Decode(map[string]string) error
}](t *testing.T, h H) {
	t.Helper()
	var back H
	if err := P(&back).Decode(h.Encode()); err != nil || back != h {
		t.Fatalf("%T round trip: %v %+v, want %+v", h, err, back, h)
	}
}

func TestOtherNameServerHeaders(t *testing.T) {
	checkRoundTrip(t, UnregisterBrokerRequestHeader{BrokerName: "b", BrokerAddr: "a:1", ClusterName: "c", BrokerID: 2})
	if err := new(UnregisterBrokerRequestHeader).Decode(map[string]string{"brokerName": "b", "brokerAddr": "a", "clusterName": "c"}); !errors.Is(err, ErrMissingField) {
		t.Fatalf("unregister without brokerId: %v", err)
	}

	hb := BrokerHeartbeatRequestHeader{ClusterName: "c", BrokerAddr: "a:1", BrokerName: "b", BrokerID: -1}
	checkRoundTrip(t, hb)
	if _, ok := hb.Encode()["brokerId"]; ok {
		t.Fatal("absent brokerId encoded")
	}

	r := RegisterBrokerResponseHeader{MasterAddr: "m:1"}
	ext := r.Encode()
	if _, ok := ext["haServerAddr"]; ok || ext["masterAddr"] != "m:1" {
		t.Fatalf("response ext %v", ext)
	}
	var rb RegisterBrokerResponseHeader
	if err := rb.Decode(ext); err != nil || rb != r {
		t.Fatalf("response: %v %+v", err, rb)
	}

	checkRoundTrip(t, DeleteTopicFromNamesrvRequestHeader{Topic: "t", ClusterName: "c"})
	if err := new(DeleteTopicFromNamesrvRequestHeader).Decode(map[string]string{"clusterName": "c"}); !errors.Is(err, ErrMissingField) {
		t.Fatalf("delete without topic: %v", err)
	}
}

func TestBodyCRC32MatchesJava(t *testing.T) {
	// CRC-32/IEEE("123456789") = 0xCBF43926; Java's UtilAll.crc32 clears the
	// top bit.
	if got := BodyCRC32([]byte("123456789")); got != 0x4BF43926 {
		t.Fatalf("BodyCRC32 = %#x", got)
	}
}

// javaRegisterBody is the shape a Java 4.9 broker sends (fastjson, compact).
const javaRegisterBody = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},` +
	`"topicConfigTable":{"TBW102":{"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8},` +
	`"orders":{"attributes":{},"order":true,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"orders","topicSysFlag":0,"writeQueueNums":2}}}}`

func TestDecodeRegisterBrokerBody(t *testing.T) {
	bare := `{"dataVersion":{"counter":1,"timestamp":5},"topicConfigTable":{"t":{"readQueueNums":1,"writeQueueNums":1,"perm":6}}}`
	tests := []struct {
		name       string
		body       string
		compressed bool
		wantErr    bool
		topics     int
		version    DataVersion
	}{
		{"java wrapped", javaRegisterBody, false, false, 2, DataVersion{Timestamp: 1700000000000, Counter: 3}},
		{"bare wrapper", bare, false, false, 1, DataVersion{Timestamp: 5, Counter: 1}},
		{"empty body", "", false, false, 0, DataVersion{}},
		{"empty body compressed flag", "", true, false, 0, DataVersion{}},
		{"json marked compressed", javaRegisterBody, true, true, 0, DataVersion{}},
		{"not json", "{topic", false, true, 0, DataVersion{}},
		{"array", "[]", false, true, 0, DataVersion{}},
		{"wrong type", `{"topicConfigSerializeWrapper":{"topicConfigTable":[]}}`, false, true, 0, DataVersion{}},
		{"null table", `{"topicConfigSerializeWrapper":{"topicConfigTable":null}}`, false, false, 0, DataVersion{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := DecodeRegisterBrokerBody([]byte(tt.body), tt.compressed)
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := b.TopicConfigSerializeWrapper
			if len(w.TopicConfigTable) != tt.topics || w.DataVersion != tt.version || w.TopicConfigTable == nil {
				t.Fatalf("got %+v", w)
			}
		})
	}
	b, _ := DecodeRegisterBrokerBody([]byte(javaRegisterBody), false)
	orders := b.TopicConfigSerializeWrapper.TopicConfigTable["orders"]
	if orders.ReadQueueNums != 4 || orders.WriteQueueNums != 2 || !orders.Order || orders.Perm != 6 {
		t.Fatalf("orders %+v", orders)
	}
	bb, _ := DecodeRegisterBrokerBody([]byte(bare), false)
	if bb.TopicConfigSerializeWrapper.TopicConfigTable["t"].TopicName != "t" {
		t.Fatal("topic name not filled from key")
	}
}

func TestRegisterBrokerBodyEncodeRoundTrip(t *testing.T) {
	body := RegisterBrokerBody{TopicConfigSerializeWrapper: TopicConfigSerializeWrapper{
		TopicConfigTable: map[string]TopicConfig{"t": topicconf.New("t")},
		DataVersion:      DataVersion{}.Next(42),
	}}
	enc, err := body.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(enc), `"filterServerList":[]`) {
		t.Fatalf("encoded %s", enc)
	}
	back, err := DecodeRegisterBrokerBody(enc, false)
	if err != nil {
		t.Fatal(err)
	}
	got := back.TopicConfigSerializeWrapper
	if got.DataVersion != (DataVersion{Timestamp: 42, Counter: 1}) || got.TopicConfigTable["t"].ReadQueueNums != 16 ||
		got.TopicConfigTable["t"].TopicFilterType != TopicFilterSingleTag {
		t.Fatalf("round trip %+v", got)
	}
}

func TestQueryDataVersionHeaders(t *testing.T) {
	checkRoundTrip(t, QueryDataVersionRequestHeader{BrokerName: "b", BrokerAddr: "a:1", ClusterName: "c", BrokerID: 0})
	if err := new(QueryDataVersionRequestHeader).Decode(map[string]string{"brokerName": "b"}); !errors.Is(err, ErrMissingField) {
		t.Fatalf("missing fields: %v", err)
	}
	for _, changed := range []bool{true, false} {
		var r QueryDataVersionResponseHeader
		if err := r.Decode(QueryDataVersionResponseHeader{Changed: changed}.Encode()); err != nil || r.Changed != changed {
			t.Fatalf("response %v: %+v %v", changed, r, err)
		}
	}
	var g GetTopicsByClusterRequestHeader
	if err := g.Decode(GetTopicsByClusterRequestHeader{Cluster: "c"}.Encode()); err != nil || g.Cluster != "c" {
		t.Fatalf("topics by cluster: %+v %v", g, err)
	}
	if err := g.Decode(nil); !errors.Is(err, ErrMissingField) {
		t.Fatalf("topics by cluster without cluster: %v", err)
	}
}
