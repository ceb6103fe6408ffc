package namesrv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// fakeBroker stands at a registered broker address and records what the
// official client sends there: proof that the client found the address in
// the route the name server gave it.
type fakeBroker struct {
	srv *remoting.Server
	mu  sync.Mutex
	got []string // "code topic" per request
}

func startFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	fb := &fakeBroker{}
	cfg := remoting.DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Transport = remoting.TransportStd
	cfg.Logger = quietLogger()
	srv, err := remoting.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	record := func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		topic := req.Ext("topic")
		if topic == "" {
			topic = req.Ext("b") // SEND_MESSAGE_V2's short key
		}
		fb.mu.Lock()
		fb.got = append(fb.got, fmt.Sprintf("%d %s", req.Code, topic))
		fb.mu.Unlock()
		if req.Code == protocol.ReqDeleteTopicInBroker {
			return protocol.NewResponse(req, protocol.RespSuccess, "")
		}
		// Refuse sends, so the producer fails fast without a retry storm.
		return protocol.NewResponse(req, protocol.RespNoPermission, "fake broker refuses")
	}
	srv.HandleDefault(record)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	fb.srv = srv
	t.Cleanup(func() { srv.Close() })
	return fb
}

func (fb *fakeBroker) requests() []string {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return append([]string(nil), fb.got...)
}

// TestOfficialAdminReadsRoutes registers a master (at a fake broker) and a
// slave over the wire, then lets the official client's admin API read the
// topic list, the publish queues and the cluster list, and delete the topic
// — which sends DELETE_TOPIC_IN_BROKER to the master address it read from
// our route, then DELETE_TOPIC_IN_NAMESRV to us.
func TestOfficialAdminReadsRoutes(t *testing.T) {
	e := start(t, nil)
	fb := startFakeBroker(t)
	c := newClient(t, nil)
	e.register(t, c, broker{cluster: "DefaultCluster", name: "broker-a", addr: fb.srv.Addr(), version: 1,
		topics: map[string]int{"T": 4, "TBW102": 8}})
	// A slave: if brokerAddrs were not compact, the official client would
	// parse its id as 0 and send to it instead of the master.
	e.register(t, c, broker{cluster: "DefaultCluster", name: "broker-a", addr: "127.0.0.1:1", id: 1, version: 1})

	adm := official.Admin(t, e.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	list, err := adm.FetchAllTopicList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(list.TopicList)
	if !reflect.DeepEqual(list.TopicList, []string{"T", "TBW102"}) {
		t.Fatalf("topic list %v", list.TopicList)
	}

	mqs, err := adm.FetchPublishMessageQueues(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mq := range mqs {
		got = append(got, fmt.Sprintf("%s/%s/%d", mq.Topic, mq.BrokerName, mq.QueueId))
	}
	if want := []string{"T/broker-a/0", "T/broker-a/1", "T/broker-a/2", "T/broker-a/3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("publish queues %v, want %v", got, want)
	}

	clusters, err := adm.FetchClusterList("T")
	if err != nil || !reflect.DeepEqual(clusters, []string{"DefaultCluster"}) {
		t.Fatalf("cluster list %v %v", clusters, err)
	}

	if _, err := adm.FetchPublishMessageQueues(ctx, "missing"); !errors.Is(err, rmqerrors.ErrTopicNotExist) {
		t.Fatalf("unknown topic: %v, want ErrTopicNotExist", err)
	}

	if err := adm.DeleteTopic(ctx, admin.WithTopicDelete("T")); err != nil {
		t.Fatal(err)
	}
	if got := fb.requests(); !reflect.DeepEqual(got, []string{fmt.Sprintf("%d T", protocol.ReqDeleteTopicInBroker)}) {
		t.Fatalf("master received %v", got)
	}
	if r, resp := e.route(t, c, "T"); r != nil || resp.Code != protocol.RespTopicNotExist {
		t.Fatal("topic still routed after the official client deleted it")
	}
}

// TestOfficialProducerRoutesToBroker lets the official producer look up a
// route (GET_ROUTEINFO_BY_TOPIC through its own route cache) and send to the
// broker address it found there.
func TestOfficialProducerRoutesToBroker(t *testing.T) {
	e := start(t, nil)
	fb := startFakeBroker(t)
	c := newClient(t, nil)
	e.register(t, c, broker{cluster: "DefaultCluster", name: "broker-a", addr: fb.srv.Addr(), version: 1,
		topics: map[string]int{"orders": 2}})
	e.register(t, c, broker{cluster: "DefaultCluster", name: "broker-a", addr: "127.0.0.1:1", id: 1, version: 1})

	p := official.Producer(t, e.addr, producer.WithGroupName("runnel-namesrv-test"), producer.WithRetry(0),
		producer.WithSendMsgTimeout(3*time.Second))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.SendSync(ctx, primitive.NewMessage("orders", []byte("hello")))
	if err == nil {
		t.Fatal("send to the refusing fake broker succeeded")
	}
	got := fb.requests()
	if len(got) != 1 || got[0] != fmt.Sprintf("%d orders", protocol.ReqSendMessage) {
		t.Fatalf("master received %v (send error %v)", got, err)
	}
}
