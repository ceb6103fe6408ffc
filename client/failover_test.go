package client

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/faultfs"
)

// These tests move the master of one brokerName from one real broker to
// another under our client: broker 0 starts as the master (brokerId 0) of
// "broker-a" and broker 1 as its slave (brokerId 1); the failover makes
// broker 1 register as master. The clients' periodic route refresh is an
// hour away, so only the refresh a failure causes can find the new master.

// startGroup starts the two brokers of broker-a and creates topic with n
// queues on both. configure, if set, adjusts broker i's config after that.
func startGroup(t *testing.T, topic string, n int, configure func(i int, cfg *config.Config)) *cluster.Cluster {
	t.Helper()
	c := startCluster(t, cluster.Brokers(2), cluster.Configure(func(i int, cfg *config.Config) {
		cfg.BrokerName = "broker-a"
		cfg.BrokerID = int64(i)
		if configure != nil {
			configure(i, cfg)
		}
	}))
	// One backend per broker: the master's route gives the topic's n
	// queues, and the slave's copy of the topic waits for the failover.
	for i := range 2 {
		be := &backend{ns: c.NamesrvAddr(), runnel: c, brokers: []string{c.BrokerAddr(i)}}
		be.createTopic(t, topic, n)
	}
	waitMaster(t, c, topic, 0)
	return c
}

// failover makes broker 1 the master of broker-a and waits until the name
// server says so.
func failover(t *testing.T, c *cluster.Cluster, topic string) {
	t.Helper()
	c.ReconfigureBroker(1, func(cfg *config.Config) { cfg.BrokerID = protocol.MasterID })
	waitMaster(t, c, topic, 1)
}

// waitMaster waits until the name server's route of topic names broker i
// as the master of broker-a, with writable queues.
func waitMaster(t *testing.T, c *cluster.Cluster, topic string, i int) {
	t.Helper()
	testwait.For(t, testwait.Default, fmt.Sprintf("broker %d as the master of broker-a", i), func() bool {
		r, ok := c.Namesrv().Table().TopicRoute(topic)
		if !ok || len(r.BrokerDatas) != 1 || len(r.QueueDatas) != 1 {
			return false
		}
		return r.BrokerDatas[0].MasterAddr() == c.BrokerAddr(i) && r.QueueDatas[0].Perm&permWrite != 0
	})
}

// storedOn fails the test unless res was stored by broker i (its offset
// message id carries the storing broker's address).
func storedOn(t *testing.T, c *cluster.Cluster, res SendResult, i int) {
	t.Helper()
	host, _, err := message.ParseOffsetMsgID(res.OffsetMsgID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := netip.ParseAddrPort(c.BrokerAddr(i))
	if err != nil {
		t.Fatal(err)
	}
	if host.Port() != want.Port() {
		t.Fatalf("message stored at %v, want broker %d (%v)", host, i, want)
	}
}

// rawSend sends one SEND_MESSAGE for topic's queue 0 straight to addr.
func rawSend(t *testing.T, addr, topic string) *protocol.Command {
	t.Helper()
	rc := remoting.NewClient(remoting.ClientConfig{Logger: discardLogger()})
	defer rc.Close()
	h := protocol.SendMessageRequestHeader{ProducerGroup: "raw", Topic: topic, DefaultTopic: protocol.DefaultTopicKey,
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), MaxReconsumeTimes: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := rc.Invoke(ctx, addr, protocol.NewRequest(protocol.ReqSendMessage, h.Encode(), []byte("probe")))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sendStoredOn sends body to topic and fails t unless broker i stored it.
func sendStoredOn(t *testing.T, c *cluster.Cluster, p *Producer, topic, body string, i int) {
	t.Helper()
	res, err := p.Send(context.Background(), &Message{Topic: topic, Body: []byte(body)})
	if err != nil {
		t.Fatalf("send %s: %v", body, err)
	}
	storedOn(t, c, res, i)
}

func failoverProducer(t *testing.T, c *cluster.Cluster) *Producer {
	return startProducer(t, c.NamesrvAddr(), func(cfg *ProducerConfig) {
		cfg.Client.RouteRefreshInterval = time.Hour
	})
}

// TestSendFindsNewMasterAtOnce: the master of broker-a dies (no
// unregistration, as in a crash) and its slave registers as master; the
// producer's next send fails to connect to the old address, reads the
// route again and is stored by the new master, within that one Send.
func TestSendFindsNewMasterAtOnce(t *testing.T) {
	c := startGroup(t, "FO", 2, nil)
	p := failoverProducer(t, c)
	sendStoredOn(t, c, p, "FO", "before", 0)

	c.KillBroker(0)
	failover(t, c, "FO")
	sendStoredOn(t, c, p, "FO", "after", 1)
}

// TestRecallFindsNewMasterAtOnce: a recall whose broker's master died
// reads the route again and goes to the new master within that one Recall
// (here the new master does not hold the message, which an unreplicated
// pair cannot; a recall is accepted all the same, as in RocketMQ: it is a
// withdrawal of whatever of its id falls due).
func TestRecallFindsNewMasterAtOnce(t *testing.T) {
	c := startGroup(t, "FRC", 1, nil)
	p := failoverProducer(t, c)
	res, err := p.Send(context.Background(), &Message{Topic: "FRC", Body: []byte("later"), DeliverAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	storedOn(t, c, res, 0)

	c.KillBroker(0)
	failover(t, c, "FRC")
	id, err := p.Recall(context.Background(), "FRC", res.RecallHandle)
	if err != nil || id != res.MsgID {
		t.Fatalf("recall after the failover: %q, %v; want %s", id, err, res.MsgID)
	}
}

// TestSendLeavesARefusingMasterAtOnce: the old master stays up but refuses
// writes with the code and remark a Java slave gives (SERVICE_NOT_AVAILABLE,
// "... messages are put to the slave ..."; here from a full disk, the same
// answer until this broker has roles), and the slave registers as master.
// The producer's send is refused, reads the route again and is stored by
// the new master, within that one Send.
func TestSendLeavesARefusingMasterAtOnce(t *testing.T) {
	fs := faultfs.New(vfs.Default, 10<<30, 40)
	c := startGroup(t, "FR", 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.StoreOptions = func(o *store.Options) {
				o.FS = fs
				o.DiskCheckInterval = 20 * time.Millisecond
			}
		}
	})
	p := failoverProducer(t, c)
	sendStoredOn(t, c, p, "FR", "before", 0)

	fs.SetUsage(95)
	// The old master tells the name server first (its topics read-only),
	// then the new one registers writable: the order a demoted master and
	// its successor keep.
	testwait.For(t, testwait.Default, "broker 0 to register read-only", func() bool {
		r, ok := c.Namesrv().Table().TopicRoute("FR")
		return ok && len(r.QueueDatas) == 1 && r.QueueDatas[0].Perm&permWrite == 0
	})
	failover(t, c, "FR")

	// The refusal the producer meets first is a slave's.
	if resp := rawSend(t, c.BrokerAddr(0), "FR"); resp.Code != protocol.RespServiceNotAvailable ||
		!strings.Contains(resp.Remark, "messages are put to the slave") {
		t.Fatalf("old master's answer: %d %q, want code 14 with Java's slave remark", resp.Code, resp.Remark)
	}

	sendStoredOn(t, c, p, "FR", "after", 1)
}

// TestPullFindsNewMasterAtOnce: a push consumer's held pulls on the old
// master fail when it dies; the pull loop reads the route again (not
// waiting its hour-long error delay) until the new master is registered,
// then pulls there and consumes what is sent to it.
func TestPullFindsNewMasterAtOnce(t *testing.T) {
	c := startGroup(t, "FP", 2, nil)
	col := newCollector()
	cons := newConsumer(t, c.NamesrvAddr(), "g-fp", func(cfg *PushConsumerConfig) {
		cfg.Concurrently = col.listener()
		cfg.Client.RouteRefreshInterval = time.Hour
		cfg.Client.RebalanceInterval = time.Hour
		// Without the fast path a failed pull waits this long.
		cfg.PullErrorDelay = time.Hour
	})
	startConsumer(t, cons, "FP", "*")
	testwait.For(t, testwait.Default, "both queues pulled from broker 0", func() bool {
		return c.Broker(0).PullRequests() >= 2
	})

	c.KillBroker(0)
	failover(t, c, "FP")
	p := failoverProducer(t, c)
	for i := range 10 {
		res, err := p.Send(context.Background(), &Message{Topic: "FP", Body: []byte(fmt.Sprintf("m-%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		storedOn(t, c, res, 1)
	}
	testwait.For(t, 20*time.Second, "the 10 messages from the new master", func() bool { return col.distinct() == 10 })
}
