package namesrv

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestRegisterAndQuery(t *testing.T) {
	e := start(t, nil)
	c := newClient(t, nil)
	res := e.register(t, c, broker{cluster: "c1", name: "b", addr: "10.0.0.1:10911", version: 1, topics: map[string]int{"T": 4, "TBW102": 8}})
	if res != (protocol.RegisterBrokerResponseHeader{}) {
		t.Fatalf("master response header %+v", res)
	}
	res = e.register(t, c, broker{cluster: "c1", name: "b", addr: "10.0.0.2:10911", id: 1, version: 1})
	if res.MasterAddr != "10.0.0.1:10911" || res.HAServerAddr != "10.0.0.1:109110" {
		t.Fatalf("slave response header %+v", res)
	}

	r, resp := e.route(t, c, "T")
	if r == nil {
		t.Fatalf("route: code %d %q", resp.Code, resp.Remark)
	}
	if !strings.Contains(string(resp.Body), `"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"}`) {
		t.Fatalf("route body %s", resp.Body)
	}
	if len(r.QueueDatas) != 1 || r.QueueDatas[0] != (protocol.QueueData{BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}) {
		t.Fatalf("queues %+v", r.QueueDatas)
	}

	resp = call(t, c, e.addr, protocol.NewRequest(protocol.ReqGetBrokerClusterInfo, nil, nil))
	ci, err := protocol.DecodeClusterInfo(resp.Body)
	if err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("cluster info: %d %v", resp.Code, err)
	}
	want := protocol.ClusterInfo{
		BrokerAddrTable:  map[string]protocol.BrokerData{"b": {Cluster: "c1", BrokerName: "b", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}}},
		ClusterAddrTable: map[string][]string{"c1": {"b"}},
	}
	if !reflect.DeepEqual(*ci, want) {
		t.Fatalf("cluster info %+v", ci)
	}

	resp = call(t, c, e.addr, protocol.NewRequest(protocol.ReqGetAllTopicListFromNameServer, nil, nil))
	if resp.Code != protocol.RespSuccess || string(resp.Body) != `{"topicList":["T","TBW102"]}` {
		t.Fatalf("topic list: %d %s", resp.Code, resp.Body)
	}

	resp = call(t, c, e.addr, protocol.NewRequest(protocol.ReqDeleteTopicInNameSrv,
		protocol.DeleteTopicFromNamesrvRequestHeader{Topic: "T"}.Encode(), nil))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("delete: %d %q", resp.Code, resp.Remark)
	}
	if r, resp := e.route(t, c, "T"); r != nil || resp.Code != protocol.RespTopicNotExist {
		t.Fatalf("deleted topic still routed: %+v", r)
	}

	resp = call(t, c, e.addr, protocol.NewRequest(protocol.ReqUnregisterBroker,
		protocol.UnregisterBrokerRequestHeader{BrokerName: "b", BrokerAddr: "10.0.0.1:10911", ClusterName: "c1"}.Encode(), nil))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("unregister: %d %q", resp.Code, resp.Remark)
	}
	bd := e.srv.Table().ClusterInfo().BrokerAddrTable["b"]
	if !reflect.DeepEqual(bd.BrokerAddrs, map[int64]string{1: "10.0.0.2:10911"}) {
		t.Fatalf("after master unregistered: %+v", bd)
	}
}

func TestUnknownTopic(t *testing.T) {
	e := start(t, nil)
	c := newClient(t, nil)
	r, resp := e.route(t, c, "nope")
	if r != nil || resp.Code != protocol.RespTopicNotExist {
		t.Fatalf("code %d", resp.Code)
	}
	if resp.Remark != "No topic route info in name server for the topic: nope" || len(resp.Body) != 0 {
		t.Fatalf("remark %q body %q", resp.Remark, resp.Body)
	}
}

func TestUnknownCode(t *testing.T) {
	e := start(t, nil)
	c := newClient(t, nil)
	for _, code := range []int16{protocol.ReqSendMessage, protocol.ReqPutKVConfig, 9999} {
		resp := call(t, c, e.addr, protocol.NewRequest(code, nil, nil))
		if resp.Code != protocol.RespRequestCodeNotSupported || !strings.Contains(resp.Remark, "not supported") ||
			!strings.Contains(resp.Remark, "request code") {
			t.Fatalf("code %d: got %d %q", code, resp.Code, resp.Remark)
		}
	}
}

func TestBadInput(t *testing.T) {
	e := start(t, nil)
	c := newClient(t, nil)
	good := broker{cluster: "c", name: "b", addr: "a:1", topics: map[string]int{"T": 1}}

	noAddr := good.request(t)
	delete(noAddr.ExtFields, "brokerAddr")
	badID := good.request(t)
	badID.ExtFields["brokerId"] = "master"
	badBody := good.request(t)
	badBody.Body = []byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":[`)
	badBody.ExtFields["bodyCrc32"] = "0"
	badCRC := good.request(t)
	badCRC.ExtFields["bodyCrc32"] = "12345"
	compressed := good.request(t)
	compressed.ExtFields["compressed"] = "true"

	tests := []struct {
		name   string
		req    *protocol.Command
		code   int16
		remark string
	}{
		{"register without brokerAddr", noAddr, protocol.RespSystemError, "brokerAddr"},
		{"register with bad brokerId", badID, protocol.RespSystemError, "brokerId"},
		{"register with bad body", badBody, protocol.RespSystemError, "RegisterBrokerBody"},
		{"register with wrong crc", badCRC, protocol.RespSystemError, "crc32 not match"},
		{"register json marked compressed", compressed, protocol.RespSystemError, "compressed"},
		{"route without topic", protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, nil, nil), protocol.RespSystemError, "topic"},
		{"unregister without id", protocol.NewRequest(protocol.ReqUnregisterBroker,
			map[string]string{"brokerName": "b", "brokerAddr": "a:1", "clusterName": "c"}, nil), protocol.RespSystemError, "brokerId"},
		{"heartbeat without addr", protocol.NewRequest(protocol.ReqBrokerHeartbeat,
			map[string]string{"clusterName": "c"}, nil), protocol.RespSystemError, "brokerAddr"},
		{"delete without topic", protocol.NewRequest(protocol.ReqDeleteTopicInNameSrv, nil, nil), protocol.RespSystemError, "topic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := call(t, c, e.addr, tt.req)
			if resp.Code != tt.code || !strings.Contains(resp.Remark, tt.remark) {
				t.Fatalf("got %d %q, want %d containing %q", resp.Code, resp.Remark, tt.code, tt.remark)
			}
		})
	}
	if len(e.srv.Table().LiveBrokers()) != 0 {
		t.Fatalf("bad registrations left brokers: %+v", e.srv.Table().LiveBrokers())
	}
	// The server is unharmed and the same connection still works.
	e.register(t, c, good)
	if r, resp := e.route(t, c, "T"); r == nil {
		t.Fatalf("route after bad input: %d", resp.Code)
	}
}

func TestExpiryByClock(t *testing.T) {
	e := start(t, nil)
	var closed atomic.Int32
	c := newClient(t, func(string) { closed.Add(1) })
	e.register(t, c, broker{cluster: "c", name: "b", addr: "a:1", topics: map[string]int{"T": 1}})
	e.register(t, c, broker{cluster: "c", name: "q", addr: "q:1", topics: map[string]int{"Q": 1}, heartbeatTimeout: 10_000})

	e.clock.Advance(10*time.Second + time.Millisecond)
	if got := e.srv.ExpireBrokers(); len(got) != 1 || got[0].BrokerAddr != "q:1" {
		t.Fatalf("expired %+v, want only q:1 (its own 10 s timeout)", got)
	}
	// The expired broker's connection is closed, as Java does; it is also
	// the other broker's connection here, which then leaves too.
	testwait.For(t, testwait.Default, "expired broker's connection closed", func() bool { return closed.Load() == 1 })
	testwait.For(t, testwait.Default, "brokers of the closed connection removed", func() bool { return len(e.srv.Table().LiveBrokers()) == 0 })

	// Re-register over a fresh connection; heartbeats keep it alive.
	e.register(t, c, broker{cluster: "c", name: "b", addr: "a:1", topics: map[string]int{"T": 1}})
	for i := 0; i < 3; i++ {
		e.clock.Advance(100 * time.Second)
		resp := call(t, c, e.addr, protocol.NewRequest(protocol.ReqBrokerHeartbeat,
			protocol.BrokerHeartbeatRequestHeader{ClusterName: "c", BrokerAddr: "a:1", BrokerName: "b", BrokerID: 0}.Encode(), nil))
		if resp.Code != protocol.RespSuccess {
			t.Fatalf("heartbeat: %d %q", resp.Code, resp.Remark)
		}
		if got := e.srv.ExpireBrokers(); len(got) != 0 {
			t.Fatalf("expired despite heartbeat: %+v", got)
		}
	}
	e.clock.Advance(120*time.Second + time.Millisecond)
	if got := e.srv.ExpireBrokers(); len(got) != 1 {
		t.Fatalf("expired %+v", got)
	}
	if r, resp := e.route(t, newClient(t, nil), "T"); r != nil || resp.Code != protocol.RespTopicNotExist {
		t.Fatalf("expired broker still routed")
	}
}

func TestScanLoopExpires(t *testing.T) {
	e := start(t, func(c *Config) { c.ScanInterval = 5 * time.Millisecond })
	c := newClient(t, nil)
	e.register(t, c, broker{cluster: "c", name: "b", addr: "a:1", topics: map[string]int{"T": 1}})
	// The boundary is the table's business (routeinfo tests); this test
	// shows the loop runs scans on its own.
	e.clock.Advance(121 * time.Second)
	testwait.For(t, testwait.Default, "scan loop expiry", func() bool { return len(e.srv.Table().LiveBrokers()) == 0 })
}

func TestExpiryOnConnectionClose(t *testing.T) {
	e := start(t, nil)
	stay := newClient(t, nil)
	leave := newClient(t, nil)
	e.register(t, stay, broker{cluster: "c", name: "b1", addr: "a:1", topics: map[string]int{"T": 1}})
	e.register(t, leave, broker{cluster: "c", name: "b2", addr: "a:2", topics: map[string]int{"T": 1, "U": 1}})
	if r, _ := e.route(t, stay, "T"); r == nil || len(r.BrokerDatas) != 2 {
		t.Fatalf("route before close %+v", r)
	}
	leave.Close()
	testwait.For(t, testwait.Default, "broker of the closed connection removed", func() bool { return len(e.srv.Table().LiveBrokers()) == 1 })
	r, _ := e.route(t, stay, "T")
	if r == nil || len(r.BrokerDatas) != 1 || r.BrokerDatas[0].BrokerName != "b1" {
		t.Fatalf("route after close %+v", r)
	}
	if r, resp := e.route(t, stay, "U"); r != nil || resp.Code != protocol.RespTopicNotExist {
		t.Fatal("topic of the departed broker still routed")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		mod   func(*Config)
		field string
	}{
		{func(c *Config) { c.ListenAddr = "" }, "ListenAddr"},
		{func(c *Config) { c.BrokerExpiry = 0 }, "BrokerExpiry"},
		{func(c *Config) { c.ScanInterval = -1 }, "ScanInterval"},
		{func(c *Config) { c.Transport = "carrier-pigeon" }, "Transport"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.mod(&cfg)
		_, err := New(cfg)
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: err %v", tt.field, err)
		}
	}
	if d := DefaultConfig(); d.ListenAddr != ":9876" || d.BrokerExpiry != 120*time.Second || d.ScanInterval != 5*time.Second {
		t.Fatalf("defaults %+v", d)
	}
}

func TestStartTwiceAndCloseTwice(t *testing.T) {
	e := start(t, nil)
	if err := e.srv.Start(); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second Start: %v", err)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Transport = testTransport()
	cfg.Logger = quietLogger()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	c := newClient(t, nil)
	select {
	case <-srv.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	if resp := call(t, c, srv.Addr(), protocol.NewRequest(protocol.ReqGetBrokerClusterInfo, nil, nil)); resp.Code != protocol.RespSuccess ||
		string(resp.Body) != `{"brokerAddrTable":{},"clusterAddrTable":{}}` {
		t.Fatalf("cluster info of an empty server: %d %s", resp.Code, resp.Body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestQueryDataVersionAndTopicsByCluster(t *testing.T) {
	e := start(t, nil)
	c := newClient(t, nil)
	e.register(t, c, broker{cluster: "c1", name: "b", addr: "a:1", version: 3, topics: map[string]int{"T": 1}})
	query := func(counter int64) (*protocol.Command, protocol.QueryDataVersionResponseHeader) {
		body := []byte(`{"timestamp":1,"counter":` + strconv.FormatInt(counter, 10) + `,"stateVersion":0}`)
		resp := call(t, c, e.addr, protocol.NewRequest(protocol.ReqQueryDataVersion,
			protocol.QueryDataVersionRequestHeader{BrokerName: "b", BrokerAddr: "a:1", ClusterName: "c1"}.Encode(), body))
		var h protocol.QueryDataVersionResponseHeader
		h.Decode(resp.ExtFields)
		return resp, h
	}
	resp, h := query(3)
	if resp.Code != protocol.RespSuccess || h.Changed || string(resp.Body) != `{"timestamp":1,"counter":3,"stateVersion":0}` {
		t.Fatalf("same version: %d changed=%v body=%s", resp.Code, h.Changed, resp.Body)
	}
	if _, h = query(4); !h.Changed {
		t.Fatal("newer version not reported changed")
	}
	resp = call(t, c, e.addr, protocol.NewRequest(protocol.ReqQueryDataVersion,
		protocol.QueryDataVersionRequestHeader{BrokerName: "b", BrokerAddr: "a:1", ClusterName: "c1"}.Encode(), []byte("{")))
	if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, "DataVersion") {
		t.Fatalf("bad body: %d %q", resp.Code, resp.Remark)
	}

	resp = call(t, c, e.addr, protocol.NewRequest(protocol.ReqGetTopicsByCluster,
		protocol.GetTopicsByClusterRequestHeader{Cluster: "c1"}.Encode(), nil))
	if resp.Code != protocol.RespSuccess || string(resp.Body) != `{"topicList":["T"]}` {
		t.Fatalf("topics by cluster: %d %s", resp.Code, resp.Body)
	}
}

// TestRunThatCannotListenLeavesNothing: a server whose address is taken
// fails Run with the listener's error, and what New started (the ACL
// file's watcher) stops with it; the package's leak check would report
// the watcher otherwise.
func TestRunThatCannotListenLeavesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	file := filepath.Join(t.TempDir(), "plain_acl.yml")
	if err := os.WriteFile(file, []byte("accounts:\n  - {accessKey: rocketmq2, secretKey: 12345678, admin: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.ListenAddr = busy.Addr().String()
	cfg.Transport = testTransport()
	cfg.Logger = quietLogger()
	cfg.ACLFile = file
	before := goleak.IgnoreCurrent()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Run on a taken address: %v", err)
	}
	if err := goleak.Find(leakcheck.Netpoll, before); err != nil {
		t.Fatal(err)
	}
}
