package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Live consumers inspected through the brokers: the admin asks a broker,
// the broker asks the client (GET_CONSUMER_RUNNING_INFO,
// CONSUME_MESSAGE_DIRECTLY, INVOKE_BROKER_TO_GET_CONSUMER_STATUS) and
// returns its answer. Here the consumer is Runnel's client; the official
// client's push consumer is in consumer_admin_official_test.go.

// onlyClient waits until group has exactly one client, online on the
// brokers named, and returns it.
func onlyClient(t testing.TB, ctx context.Context, a *admin.Admin, group string, brokers ...string) admin.ConsumerClient {
	t.Helper()
	var cc *admin.ConsumerConnection
	testwait.For(t, 20*time.Second, "the consumer online on every broker", func() bool {
		var err error
		cc, err = a.ConsumerConnections(ctx, group)
		return err == nil && len(cc.Clients) == 1 && slices.Equal(cc.Clients[0].Brokers, brokers)
	})
	return cc.Clients[0]
}

func TestConsumerAdminRunnelClient(t *testing.T) {
	c := rcCluster(t, cluster.Brokers(2))
	const topic, group = "LiveT", "live-g"
	var consumed atomic.Int64
	var again atomic.Int64 // deliveries of the message consumed directly
	// Only on the second broker, so the admin's question to the first finds
	// the client not online there and goes on to the second.
	createTopic(t, c, 1, topic, 2)
	p := rcProducer(t, c)
	var ids []string
	for i := range 8 {
		res, err := p.Send(context.Background(), &client.Message{Topic: topic, Body: []byte(body(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.OffsetMsgID)
	}
	cons := rcConsumer(t, c, group, topic, "*", func(m *client.MessageExt) {
		if consumed.Add(1) > 8 && string(m.Body) == body(3) {
			again.Add(1)
		}
	})
	testwait.For(t, 20*time.Second, "every message consumed", func() bool { return consumed.Load() >= 8 })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := c.Admin(t)
	cl := onlyClient(t, ctx, a, group, c.BrokerName(1))
	if !strings.HasPrefix(cl.ClientID, "127.0.0.1@rc-") || cl.Language == "" {
		t.Fatalf("client %+v", cl)
	}

	// Running info: the client's settings, subscriptions and every queue
	// it was assigned, with the offsets it will commit.
	var ri *admin.RunningInfo
	testwait.For(t, 20*time.Second, "running info showing the consumed offsets", func() bool {
		var err error
		ri, err = a.ConsumerRunningInfo(ctx, group, cl.ClientID, false)
		if err != nil {
			t.Fatalf("running info: %v", err)
		}
		var committed int64
		for _, q := range ri.Queues {
			if q.Topic == topic {
				committed += q.CommitOffset
			}
		}
		return committed == 8
	})
	if ri.Broker.Name != c.BrokerName(1) || ri.Properties["consumerGroup"] != group || ri.Properties["messageModel"] != "CLUSTERING" {
		t.Fatalf("running info through %v, properties %v", ri.Broker, ri.Properties)
	}
	topics := []string{}
	for _, s := range ri.Subscriptions {
		topics = append(topics, s.Topic)
	}
	if !slices.Contains(topics, topic) {
		t.Fatalf("subscriptions %+v", ri.Subscriptions)
	}
	n := 0
	for _, q := range ri.Queues {
		if q.Topic == topic {
			n++
		}
	}
	if n != rcCount(cons, topic) || n == 0 {
		t.Fatalf("%d queues of %s in the running info, the consumer has %v", n, topic, cons.Assigned())
	}

	// Consume directly: the listener runs once more on message 3.
	res, err := a.ConsumeMessageDirectly(ctx, group, cl.ClientID, ids[3])
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "CR_SUCCESS" || again.Load() != 1 {
		t.Fatalf("result %+v, message 3 consumed again %d times", res, again.Load())
	}

	// Java's consumer status: the client's in-memory offsets per queue.
	rc := remoting.NewClient(remoting.ClientConfig{})
	t.Cleanup(func() { _ = rc.Close() })
	resp, err := rc.Invoke(ctx, c.BrokerAddr(1), protocol.NewRequest(protocol.ReqInvokeBrokerToGetConsumerStatus,
		map[string]string{"topic": topic, "group": group}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != protocol.RespSuccess || !strings.Contains(string(resp.Body), fmt.Sprintf(`"consumerTable":{"%s":{{"brokerName":`, cl.ClientID)) {
		t.Fatalf("consumer status %d %s: %s", resp.Code, resp.Remark, resp.Body)
	}

	// Gone: after shutdown no broker has it, and the admin says so.
	if err := cons.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConsumerRunningInfo(ctx, group, cl.ClientID, false); !errors.Is(err, admin.ErrNotOnline) {
		t.Fatalf("after shutdown: %v, want ErrNotOnline", err)
	}
	if _, err := a.ConsumerConnections(ctx, group); !errors.Is(err, admin.ErrNotOnline) {
		t.Fatalf("after shutdown: %v, want ErrNotOnline", err)
	}
}
