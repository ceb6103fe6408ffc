//go:build !race

// Built without -race only: the official client's push consumer races with
// itself (see retry_test.go).

package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

// officialReplier starts an official push consumer on topic that answers
// every request with "re:"+body through an official producer, as the
// client's rpc example does. A reply refused because the requester is not
// registered yet (its first heartbeat may still be on the way) is sent
// again until it goes through.
func officialReplier(t *testing.T, c *cluster.Cluster, group, topic string) {
	t.Helper()
	replier := newProducer(t, c)
	newPushConsumer(t, c, group, topic, "*", func(m *primitive.MessageExt) {
		reply, err := consumer.CreateReplyMessage(m, nil)
		if err != nil {
			t.Errorf("create reply: %v", err)
			return
		}
		// CreateReplyMessage reads its body argument as properties; the
		// reply's body is set here.
		reply.Body = append([]byte("re:"), m.Body...)
		deadline := time.Now().Add(15 * time.Second)
		for {
			_, err := replier.SendSync(context.Background(), reply)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("reply to %s: %v", m.Body, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// TestOfficialRequestReply: the official producer's Request gets the
// reply an official consumer sends; our client's Request gets it from the
// same official replier, so both requesters speak the same wire.
func TestOfficialRequestReply(t *testing.T) {
	c := rcCluster(t)
	const topic = "ReqOfficial"
	createTopic(t, c, 0, topic, 2)
	officialReplier(t, c, "g-req-official", topic)

	p := newProducer(t, c)
	reply, err := p.Request(context.Background(), 30*time.Second, primitive.NewMessage(topic, []byte("ping")))
	if err != nil {
		t.Fatalf("official request: %v", err)
	}
	if string(reply.Body) != "re:ping" || !strings.HasSuffix(reply.Topic, "_REPLY_TOPIC") {
		t.Fatalf("official reply: topic %s body %q", reply.Topic, reply.Body)
	}

	ours := rcGroupProducer(t, c, "rc-requester-official")
	if m := rcRequest(t, ours, topic, "pong"); string(m.Body) != "re:pong" {
		t.Fatalf("our reply body %q", m.Body)
	}

	// And the official Request gets the reply our consumer sends.
	const ourTopic = "ReqOurReplier"
	createTopic(t, c, 0, ourTopic, 1)
	defer rcReplier(t, c, "g-req-ours", "rc-replier-official", ourTopic, "ours:")()
	reply, err = p.Request(context.Background(), 30*time.Second, primitive.NewMessage(ourTopic, []byte("hi")))
	if err != nil {
		t.Fatalf("official request to our replier: %v", err)
	}
	if string(reply.Body) != "ours:hi" {
		t.Fatalf("official requester got %q from our replier", reply.Body)
	}
}

// TestOfficialRequestTimeout: with no replier the official Request ends
// after its timeout with the client's own timeout error.
func TestOfficialRequestTimeout(t *testing.T) {
	c := rcCluster(t)
	const topic = "ReqOfficialNobody"
	createTopic(t, c, 0, topic, 1)
	p := newProducer(t, c)
	_, err := p.Request(context.Background(), 2*time.Second, primitive.NewMessage(topic, []byte("anyone?")))
	if err == nil || !strings.Contains(err.Error(), "wait reply message timeout") {
		t.Fatalf("official request without replier: %v, want its reply timeout", err)
	}
}
