package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestClusterInfoJSON(t *testing.T) {
	b, err := json.Marshal(ClusterInfo{})
	if err != nil || string(b) != `{"brokerAddrTable":{},"clusterAddrTable":{}}` {
		t.Fatalf("%s %v", b, err)
	}
	in := ClusterInfo{
		BrokerAddrTable:  map[string]BrokerData{"b": {Cluster: "c", BrokerName: "b", BrokerAddrs: map[int64]string{0: "a:1"}}},
		ClusterAddrTable: map[string][]string{"c": {"b"}},
	}
	b, _ = json.Marshal(in)
	out, err := DecodeClusterInfo(b)
	if err != nil || !reflect.DeepEqual(*out, in) {
		t.Fatalf("round trip %s: %+v %v", b, out, err)
	}
}

func TestDecodeClusterInfoFastjson(t *testing.T) {
	body := `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	c, err := DecodeClusterInfo([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.BrokerAddrTable["broker-a"].BrokerAddrs; !reflect.DeepEqual(got, map[int64]string{0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}) {
		t.Fatalf("addrs %v", got)
	}
	if !reflect.DeepEqual(c.ClusterAddrTable["DefaultCluster"], []string{"broker-a"}) {
		t.Fatalf("clusters %v", c.ClusterAddrTable)
	}
	if _, err := DecodeClusterInfo([]byte(`{"brokerAddrTable":[]}`)); err == nil {
		t.Fatal("garbage accepted")
	}
}
