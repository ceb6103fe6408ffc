package client

import (
	"context"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestOrderlyLocksRenewedBeforeBrokerExpiry: a Runnel broker forgets a
// queue lock 1 s after it was last taken; an orderly consumer renewing
// every 200 ms (RocketMQ's lockAll, every 20 s against a 60 s lease) keeps
// its queues for several leases, so another client's LOCK_BATCH_MQ gets
// none of them. Without renewal the first lock lapses after 1 s and the
// intruder's request is granted.
func TestOrderlyLocksRenewedBeforeBrokerExpiry(t *testing.T) {
	const lease = time.Second
	c := startCluster(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.LockMaxLiveTime = lease }))
	be := &backend{ns: c.NamesrvAddr(), runnel: c, brokers: []string{c.BrokerAddr(0)}}
	be.createTopic(t, "T", 2)
	cons := newConsumer(t, be.ns, "og", func(cfg *PushConsumerConfig) {
		cfg.Client.LockRenewInterval = 200 * time.Millisecond
		cfg.Orderly = func(context.Context, []*MessageExt) OrderlyResult { return OrderlySuccess }
	})
	startConsumer(t, cons, "T", "*")
	// Queues are assigned only once the broker granted their lock.
	testwait.For(t, testwait.Default, "both queues locked", func() bool { return countTopic(cons.Assigned(), "T") == 2 })

	rc := remoting.NewClient(remoting.ClientConfig{Logger: discardLogger()})
	defer rc.Close()
	body := protocol.LockBatchRequestBody{ConsumerGroup: "og", ClientID: "127.0.0.1@intruder"}
	for _, mq := range cons.Assigned() {
		if mq.Topic == "T" {
			body.MQSet = append(body.MQSet, mq)
		}
	}
	// Probe across three leases: every probe must find the locks live. The
	// probes are what the test observes over time, not a synchronisation.
	for end := time.Now().Add(3 * lease); time.Now().Before(end); time.Sleep(lease / 4) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := rc.Invoke(ctx, be.brokers[0], protocol.NewRequest(protocol.ReqLockBatchMQ, nil, body.Encode()))
		cancel()
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("LOCK_BATCH_MQ: %v %v", err, resp)
		}
		rb, err := protocol.DecodeLockBatchResponseBody(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if len(rb.LockOKMQSet) != 0 {
			t.Fatalf("another client was granted %v: the consumer's locks lapsed", rb.LockOKMQSet)
		}
	}
}
