package integration

import (
	"context"
	"testing"
	"time"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func routeOf(t *testing.T, c *cluster.Cluster, topic string) (*protocol.TopicRouteData, int16) {
	t.Helper()
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, c.NamesrvAddr(), protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
		protocol.GetRouteInfoRequestHeader{Topic: topic}.Encode(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != protocol.RespSuccess {
		return nil, resp.Code
	}
	r, err := protocol.DecodeTopicRouteData(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r, resp.Code
}

// TestRegistration: the broker registers TBW102 and its topics at start
// and each topic created through the admin API at once; a clean stop
// unregisters it; a restart registers it again; a killed broker drops out
// too, because the name server forgets a broker whose connection closes.
func TestRegistration(t *testing.T) {
	c := cluster.Start(t, cluster.Brokers(2))
	r, code := routeOf(t, c, "TBW102")
	if code != 0 || len(r.BrokerDatas) != 2 {
		t.Fatalf("TBW102 route: code %d %+v", code, r)
	}
	for _, q := range r.QueueDatas {
		if q.Perm != 7 || q.WriteQueueNums != 4 {
			t.Fatalf("TBW102 queue data %+v", q)
		}
	}
	createTopic(t, c, 1, "OnB", 3)
	r, code = routeOf(t, c, "OnB")
	if code != 0 || len(r.QueueDatas) != 1 || r.QueueDatas[0].BrokerName != c.BrokerName(1) || r.QueueDatas[0].ReadQueueNums != 3 {
		t.Fatalf("OnB route right after creation: code %d %+v", code, r)
	}
	if addr := r.BrokerDatas[0].BrokerAddrs[0]; addr != c.BrokerAddr(1) {
		t.Fatalf("advertised %s, want %s", addr, c.BrokerAddr(1))
	}

	c.StopBroker(1)
	if _, code = routeOf(t, c, "OnB"); code != protocol.RespTopicNotExist {
		t.Fatalf("after a clean stop the route answers %d, want 17", code)
	}
	c.RestartBroker(1)
	if r, code = routeOf(t, c, "OnB"); code != 0 || r.QueueDatas[0].ReadQueueNums != 3 {
		t.Fatalf("after restart: code %d %+v", code, r)
	}
	c.KillBroker(1)
	eventually(t, 5*time.Second, "the killed broker dropped", func() bool {
		_, code := routeOf(t, c, "OnB")
		return code == protocol.RespTopicNotExist
	})
	if r, code = routeOf(t, c, "TBW102"); code != 0 || len(r.BrokerDatas) != 1 {
		t.Fatalf("TBW102 after the kill: code %d %+v", code, r)
	}
}
