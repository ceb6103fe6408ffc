//go:build !race

// Built without -race only: the official client's push consumer races with
// itself (see consumer_test.go). TestGroupModel runs the same model with
// our client under -race.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// officialGroupCycles is how many fault cycles TestGroupModelOfficial runs:
// RUNNEL_GROUP_OFFICIAL_CYCLES, default 2 (one kill, one cut). Each cycle
// lasts up to about 30 s: the official client re-reads a topic's route
// only at its fixed 30 s name-server poll (internal/client.go,
// _PullNameServerInterval), so after a leader moves its sends go to the
// old master's address (refused, or no connection) until that poll.
func officialGroupCycles() int { return envCount("RUNNEL_GROUP_OFFICIAL_CYCLES", 2) }

// TestGroupModel's model with the official client as producer and push
// consumer: a 3-node group under a steady official producer (no retries of
// its own, so every re-send is the model's) and an official push consumer,
// through officialGroupCycles() kills and cuts of the leader. Every cycle
// waits until the official producer's sends succeed again, which takes
// until its next route poll (up to 30 s, hence the fewer cycles and the
// 60 s bound). Then: every SEND_OK consumed, stored at the queue offset it
// was acknowledged with, nothing stored twice that was sent once, nothing
// sent to a cut-off leader stored.
func TestGroupModelOfficial(t *testing.T) {
	const topic = "ModelOfficial"
	c := rcCluster(t, cluster.Group(3))
	l := c.Leader()
	waitListed(t, c, l, 10*time.Second)

	// The topic exists (created by our client) before the official
	// clients first ask for its route.
	sendUntilOK(t, rcProducer(t, c), topic, "first")
	// An official client asking for the route before the name server has
	// it fails its start with "route info not found".
	waitRoutedWithMaster(t, c, topic)
	m := &sendModel{acked: map[string]client.SendResult{"first": {}}, resent: map[string]bool{}}

	p := newProducer(t, c, withNoRetry(), producer.WithSendMsgTimeout(3*time.Second))
	got := newCollector()
	newPushConsumer(t, c, "model-official-cg", topic, "*", got.add)

	send := func(body string) (client.SendResult, error) {
		res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body)))
		if err != nil {
			return client.SendResult{}, err
		}
		if res.Status != primitive.SendOK {
			return client.SendResult{}, fmt.Errorf("status %d", res.Status)
		}
		return client.SendResult{Status: client.SendOK,
			Queue:       protocol.MessageQueue{Topic: topic, BrokerName: res.MessageQueue.BrokerName, QueueID: int32(res.MessageQueue.QueueId)},
			QueueOffset: res.QueueOffset}, nil
	}
	runModel(t, c, m, topic, send, officialGroupCycles(), 60*time.Second, func(b string) bool { return got.get(b) != nil })
}
