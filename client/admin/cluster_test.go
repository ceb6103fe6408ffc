package admin

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testnet"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	var c Config
	if err := c.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.NamesrvAddrs, []string{DefaultNamesrvAddr}) || c.CallTimeout != 5*time.Second || c.DialTimeout != 3*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	c = Config{NamesrvAddrs: []string{"http://a:1; b:2", "c:3"}}
	if err := c.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a:1", "b:2", "c:3"}; !reflect.DeepEqual(c.NamesrvAddrs, want) {
		t.Fatalf("addrs %v, want %v", c.NamesrvAddrs, want)
	}
	for _, bad := range []Config{
		{NamesrvAddrs: []string{"nohost"}},
		{NamesrvAddrs: []string{" ; "}},
		{CallTimeout: -1},
		{DialTimeout: -time.Second},
	} {
		err := bad.ensureDefaults()
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: err %v, want ErrBadConfig", bad, err)
		}
	}
	if _, err := New(Config{NamesrvAddrs: []string{"x"}}); !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "NamesrvAddrs") {
		t.Fatalf("New with a bad address: %v", err)
	}
}

func TestClusterInfoJavaForm(t *testing.T) {
	ns := startFake(t)
	body := `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"C1"},` +
		`"broker-b":{"brokerAddrs":{0:"10.0.0.3:10911"},"brokerName":"broker-b","cluster":"C2"}},` +
		`"clusterAddrTable":{"C1":["broker-a"],"C2":["broker-b"]}}`
	ns.reply(protocol.ReqGetBrokerClusterInfo, protocol.RespSuccess, nil, []byte(body))
	a := newAdmin(t, ns.addr())

	brokers, err := a.Brokers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Broker{
		{Cluster: "C1", Name: "broker-a", ID: 0, Addr: "10.0.0.1:10911"},
		{Cluster: "C1", Name: "broker-a", ID: 1, Addr: "10.0.0.2:10911"},
		{Cluster: "C2", Name: "broker-b", ID: 0, Addr: "10.0.0.3:10911"},
	}
	if !reflect.DeepEqual(brokers, want) {
		t.Fatalf("brokers:\n got %+v\nwant %+v", brokers, want)
	}
	reqs := ns.requests(-1)
	if len(reqs) != 1 || reqs[0].Code != protocol.ReqGetBrokerClusterInfo || len(reqs[0].Ext) != 0 || len(reqs[0].Body) != 0 {
		t.Fatalf("requests %+v, want one bare GET_BROKER_CLUSTER_INFO", reqs)
	}
}

func TestNamesrvFailover(t *testing.T) {
	dead := testnet.DeadAddr(t)

	ns := startFake(t)
	ns.reply(protocol.ReqGetAllTopicListFromNameServer, protocol.RespSuccess, nil, []byte(`{"topicList":["b","a","b"]}`))
	a := newAdmin(t, dead, ns.addr())
	topics, err := a.TopicList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(topics, []string{"a", "b"}) {
		t.Fatalf("topics %v", topics)
	}

	// Every name server down: the error names each.
	a2 := newAdmin(t, dead)
	_, err = a2.TopicList(context.Background())
	if err == nil || !strings.Contains(err.Error(), "topic list") || !strings.Contains(err.Error(), "name server "+dead) {
		t.Fatalf("err %v, want one naming the operation and %s", err, dead)
	}
}

func TestResponseErrorNamesNodeAndCode(t *testing.T) {
	ns := startFake(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespTopicNotExist, nil, nil)
	a := newAdmin(t, ns.addr())
	_, err := a.TopicRoute(context.Background(), "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
	var re *ResponseError
	if !errors.As(err, &re) || re.Code != protocol.RespTopicNotExist {
		t.Fatalf("err %v, want a *ResponseError with TOPIC_NOT_EXIST", err)
	}
	want := `admin: route of topic "nope": name server ` + ns.addr() + ` answered TOPIC_NOT_EXIST (17): fake remark`
	if err.Error() != want {
		t.Fatalf("err %q\nwant %q", err, want)
	}
	if errors.Is(err, ErrUnsupported) {
		t.Fatal("TOPIC_NOT_EXIST matched ErrUnsupported")
	}
	if _, err := a.TopicRoute(context.Background(), "bad topic"); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("bad topic name: %v", err)
	}
}

func TestSilentBrokerTimesOutNamingIt(t *testing.T) {
	ns, ba, _ := twoBrokers(t)
	ns.reply(protocol.ReqGetRouteInfoByTopic, protocol.RespSuccess, nil, routeBody("C", 1, map[string]string{"broker-a": ba.addr()}))
	release := make(chan struct{})
	defer close(release)
	ba.on(protocol.ReqGetTopicStatsInfo, func(req *protocol.Command) *protocol.Command {
		<-release // never answers while the test waits
		return nil
	})
	cfg := DefaultConfig()
	cfg.NamesrvAddrs = []string{ns.addr()}
	cfg.CallTimeout = 100 * time.Millisecond
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.TopicStats(context.Background(), "T")
	if !errors.Is(err, remoting.ErrTimeout) || !strings.Contains(err.Error(), "broker broker-a ("+ba.addr()+")") {
		t.Fatalf("err %v, want a timeout naming broker-a", err)
	}

	// A cancelled context stops the call too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.TopicStats(ctx, "T"); err == nil {
		t.Fatal("cancelled context: no error")
	}
}
