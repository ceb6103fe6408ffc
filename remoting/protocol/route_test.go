package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// clientBrokerAddrs reads a brokerAddrs object the way the official Go
// client does (internal/route.go TopicRouteData.decode): it drops the first
// and last byte of the raw object text, splits on ',', splits each entry at
// its first ':', strips every '"', and ParseInts the key ignoring errors.
// Any body Runnel sends must survive this.
func clientBrokerAddrs(t *testing.T, raw string) map[int64]string {
	t.Helper()
	if len(raw) < 2 {
		t.Fatalf("brokerAddrs %q: the official client would panic slicing it", raw)
	}
	out := map[int64]string{}
	for _, entry := range strings.Split(raw[1:len(raw)-1], ",") {
		i := strings.Index(entry, ":")
		if i < 0 {
			continue
		}
		id, _ := strconv.ParseInt(strings.ReplaceAll(entry[:i], `"`, ""), 10, 64)
		out[id] = strings.ReplaceAll(entry[i+1:], `"`, "")
	}
	return out
}

func rawBrokerAddrs(t *testing.T, body []byte) []string {
	t.Helper()
	var top struct {
		BrokerDatas []map[string]json.RawMessage `json:"brokerDatas"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, bd := range top.BrokerDatas {
		out = append(out, string(bd["brokerAddrs"]))
	}
	return out
}

func isCompact(b []byte) bool {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return false
	}
	return bytes.Equal(buf.Bytes(), b)
}

func TestTopicRouteDataEncodeForOfficialClient(t *testing.T) {
	tests := []struct {
		name  string
		route TopicRouteData
		want  []map[int64]string
	}{
		{
			name: "master and slaves",
			route: TopicRouteData{
				QueueDatas: []QueueData{{BrokerName: "b1", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicSysFlag: 3}},
				BrokerDatas: []BrokerData{{Cluster: "c", BrokerName: "b1", BrokerAddrs: map[int64]string{
					0: "10.0.0.1:10911", 1: "10.0.0.2:10911", 12: "[::1]:10911",
				}}},
			},
			want: []map[int64]string{{0: "10.0.0.1:10911", 1: "10.0.0.2:10911", 12: "[::1]:10911"}},
		},
		{
			name: "nil addrs still an object",
			route: TopicRouteData{
				BrokerDatas: []BrokerData{{Cluster: "c", BrokerName: "b1"}},
			},
			want: []map[int64]string{{}},
		},
		{
			name:  "empty route",
			route: TopicRouteData{},
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := tt.route.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !isCompact(body) {
				t.Fatalf("body not compact: %s", body)
			}
			for _, key := range []string{`"queueDatas":[`, `"brokerDatas":[`, `"filterServerTable":{`} {
				if !bytes.Contains(body, []byte(key)) {
					t.Errorf("body %s lacks %s", body, key)
				}
			}
			raws := rawBrokerAddrs(t, body)
			if len(raws) != len(tt.want) {
				t.Fatalf("got %d brokerDatas, want %d", len(raws), len(tt.want))
			}
			for i, raw := range raws {
				if got := clientBrokerAddrs(t, raw); !reflect.DeepEqual(got, tt.want[i]) {
					t.Errorf("client would read %v from %s, want %v", got, raw, tt.want[i])
				}
			}
			back, err := DecodeTopicRouteData(body)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.QueueDatas) != len(tt.route.QueueDatas) || len(back.BrokerDatas) != len(tt.route.BrokerDatas) {
				t.Fatalf("round trip: %+v", back)
			}
			for i := range tt.route.QueueDatas {
				if back.QueueDatas[i] != tt.route.QueueDatas[i] {
					t.Errorf("queue data %d: got %+v want %+v", i, back.QueueDatas[i], tt.route.QueueDatas[i])
				}
			}
		})
	}
}

func TestQueueDataWritesBothFlagSpellings(t *testing.T) {
	b, err := json.Marshal(QueueData{BrokerName: "b", Perm: 6, TopicSysFlag: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"topicSysFlag":5`)) || !bytes.Contains(b, []byte(`"topicSynFlag":5`)) {
		t.Fatalf("got %s", b)
	}
	for _, in := range []string{
		`{"brokerName":"b","topicSynFlag":7}`,
		`{"brokerName":"b","topicSysFlag":7}`,
	} {
		var q QueueData
		if err := json.Unmarshal([]byte(in), &q); err != nil {
			t.Fatal(err)
		}
		if q.TopicSysFlag != 7 {
			t.Errorf("%s: flag %d, want 7", in, q.TopicSysFlag)
		}
	}
}

func TestDecodeTopicRouteDataFastjson(t *testing.T) {
	// What a Java name server sends a client with version < V4_9_4.
	body := `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"},"brokerName":"broker-a","cluster":"DefaultCluster"},` +
		`{"brokerAddrs":{ -1 : "x:1" ,2:"y:2"},"brokerName":"odd, {0:\"quoted\"}","cluster":"c"}],` +
		`"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSynFlag":0,"writeQueueNums":4}]}`
	r, err := DecodeTopicRouteData([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.BrokerDatas) != 2 {
		t.Fatalf("brokerDatas %+v", r.BrokerDatas)
	}
	if want := map[int64]string{0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}; !reflect.DeepEqual(r.BrokerDatas[0].BrokerAddrs, want) {
		t.Errorf("addrs %v want %v", r.BrokerDatas[0].BrokerAddrs, want)
	}
	if want := map[int64]string{-1: "x:1", 2: "y:2"}; !reflect.DeepEqual(r.BrokerDatas[1].BrokerAddrs, want) {
		t.Errorf("addrs %v want %v", r.BrokerDatas[1].BrokerAddrs, want)
	}
	if r.BrokerDatas[1].BrokerName != `odd, {0:"quoted"}` {
		t.Errorf("string content was rewritten: %q", r.BrokerDatas[1].BrokerName)
	}
	if r.BrokerDatas[0].MasterAddr() != "127.0.0.1:10911" {
		t.Errorf("master %q", r.BrokerDatas[0].MasterAddr())
	}
	if len(r.QueueDatas) != 1 || r.QueueDatas[0].WriteQueueNums != 4 {
		t.Errorf("queueDatas %+v", r.QueueDatas)
	}
}

func TestQuoteNumericKeys(t *testing.T) {
	tests := []struct {
		in, want string
		changed  bool
	}{
		{`{0:"a",1:"b"}`, `{"0":"a","1":"b"}`, true},
		{`{"k":[1,2,3],"n":{10:[4,5]}}`, `{"k":[1,2,3],"n":{"10":[4,5]}}`, true},
		{`[1.5,2e3,{3:4}]`, `[1.5,2e3,{"3":4}]`, true},
		{`{"a":1,"b":2}`, `{"a":1,"b":2}`, false},
		{`{"s":"{0:1}"}`, `{"s":"{0:1}"}`, false},
		{`{"s":"\"{0:1}"}`, `{"s":"\"{0:1}"}`, false},
		{`{ 7 :true}`, `{ "7" :true}`, true},
		{`{0`, `{0`, false},
		{``, ``, false},
	}
	for _, tt := range tests {
		got, changed := quoteNumericKeys([]byte(tt.in))
		if string(got) != tt.want || changed != tt.changed {
			t.Errorf("quoteNumericKeys(%s) = %s, %v; want %s, %v", tt.in, got, changed, tt.want, tt.changed)
		}
	}
}

func TestDecodeTopicRouteDataRejectsGarbage(t *testing.T) {
	for _, in := range []string{``, `{`, `{0:}`, `[]`, `{"queueDatas":{}}`, `{"brokerDatas":[{"brokerAddrs":{x:"a"}}]}`} {
		if _, err := DecodeTopicRouteData([]byte(in)); err == nil {
			t.Errorf("DecodeTopicRouteData(%q): no error", in)
		}
	}
}

func TestGetRouteInfoRequestHeader(t *testing.T) {
	checkRoundTrip(t, GetRouteInfoRequestHeader{Topic: "%RETRY%g", AcceptStandardJSONOnly: true})
	if err := new(GetRouteInfoRequestHeader).Decode(map[string]string{}); err == nil {
		t.Fatal("missing topic accepted")
	}
}

func FuzzUnmarshalLenient(f *testing.F) {
	for _, s := range []string{
		`{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"b","cluster":"c"}],"queueDatas":[]}`,
		`{"brokerAddrTable":{"b":{"brokerAddrs":{0:"a:1"}}},"clusterAddrTable":{"c":["b"]}}`,
		`{0:[1,2,{3:"\"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r TopicRouteData
		_ = UnmarshalLenient(data, &r)
		fixed, _ := quoteNumericKeys(data)
		if len(fixed) > 3*len(data) {
			t.Fatalf("rewrite grew %d -> %d bytes", len(data), len(fixed))
		}
	})
}
