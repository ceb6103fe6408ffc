package integration

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Request/reply with Runnel's own client on both sides, over the wire.

// rcGroupProducer starts one of our producers in its own group.
func rcGroupProducer(t *testing.T, c *cluster.Cluster, group string) *client.Producer {
	t.Helper()
	return rcProducerWith(t, c, func(cfg *client.ProducerConfig) { cfg.Group = group })
}

// rcReplier answers every request on topic with prefix and the request's
// body, consuming as group and replying as producer group replyGroup. The
// test defers the function it returns, which waits for the replies in
// flight: the broker answers a reply only once the requester has taken it,
// so a requester shut down as soon as it has its reply (the test's end)
// would fail the reply that brought it.
func rcReplier(t *testing.T, c *cluster.Cluster, group, replyGroup, topic, prefix string) (wait func()) {
	t.Helper()
	replier := rcGroupProducer(t, c, replyGroup)
	var inFlight atomic.Int64
	rcConsumer(t, c, group, topic, "*", func(m *client.MessageExt) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := replier.Reply(ctx, m, append([]byte(prefix), m.Body...)); err != nil {
			t.Errorf("reply to %s: %v", m.Body, err)
		}
	})
	return func() {
		testwait.For(t, testwait.Default, "the replies in flight answered", func() bool { return inFlight.Load() == 0 })
	}
}

// rcRequest sends a request of body to topic with p and returns the
// reply, failing the test when none comes within 30 s.
func rcRequest(t *testing.T, p *client.Producer, topic, body string) *client.MessageExt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reply, err := p.Request(ctx, &client.Message{Topic: topic, Body: []byte(body)})
	if err != nil {
		t.Fatalf("request %q on %s: %v", body, topic, err)
	}
	return reply
}

// TestRequestReplyRoundTrip: our Request gets the reply our consumer
// sends with Producer.Reply; the reply comes from the cluster's reply
// topic with the request's correlation id, and RequestAsync works alike.
func TestRequestReplyRoundTrip(t *testing.T) {
	c := rcCluster(t)
	const topic = "ReqRC"
	createTopic(t, c, 0, topic, 2)
	defer rcReplier(t, c, "g-req-rc", "rc-replier", topic, "re:")()
	requester := rcGroupProducer(t, c, "rc-requester")
	reply := rcRequest(t, requester, topic, "ping")
	if string(reply.Body) != "re:ping" {
		t.Fatalf("reply body %q, want re:ping", reply.Body)
	}
	if !strings.HasSuffix(reply.Topic, "_REPLY_TOPIC") || reply.Property(protocol.PropertyCorrelationID) == "" ||
		reply.Property(protocol.PropertyPushReplyTime) == "" {
		t.Fatalf("reply topic %s, properties %v", reply.Topic, reply.Properties)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan *client.MessageExt, 1)
	errs := make(chan error, 1)
	if err := requester.RequestAsync(ctx, &client.Message{Topic: topic, Body: []byte("pong")}, func(m *client.MessageExt, err error) {
		if err != nil {
			errs <- err
			return
		}
		got <- m
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if string(m.Body) != "re:pong" {
			t.Fatalf("async reply body %q", m.Body)
		}
	case err := <-errs:
		t.Fatalf("async request: %v", err)
	case <-ctx.Done():
		t.Fatal("async request never answered")
	}
}

// TestRequestTimeoutWithoutReplier: nobody consumes the request, so the
// Request ends with its context, as ErrRequestTimeout.
func TestRequestTimeoutWithoutReplier(t *testing.T) {
	c := rcCluster(t)
	const topic = "ReqNobody"
	createTopic(t, c, 0, topic, 1)
	requester := rcGroupProducer(t, c, "rc-requester-alone")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := requester.Request(ctx, &client.Message{Topic: topic, Body: []byte("anyone?")})
	if !errors.Is(err, client.ErrRequestTimeout) {
		t.Fatalf("request without replier: %v, want ErrRequestTimeout", err)
	}
}

// TestReplyToVanishedRequester: the requester shut down before the reply;
// the replier's send is refused SYSTEM_ERROR with Java's remark naming
// the requester's client id, and the reply is still stored.
func TestReplyToVanishedRequester(t *testing.T) {
	c := rcCluster(t)
	const topic = "ReqVanish"
	createTopic(t, c, 0, topic, 1)
	requester := rcGroupProducer(t, c, "rc-requester-gone")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_, err := requester.Request(ctx, &client.Message{Topic: topic, Body: []byte("hello?")})
	cancel()
	if !errors.Is(err, client.ErrRequestTimeout) {
		t.Fatalf("request: %v", err)
	}
	if err := requester.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	core := c.Broker(0).Core()
	testwait.For(t, 10*time.Second, "the broker to drop the requester", func() bool {
		conns, err := core.ProducerConnections("rc-requester-gone")
		return err != nil || len(conns) == 0
	})

	replyStored := func() int64 { return c.Broker(0).Store().MaxOffset(c.Broker(0).Config().ClusterName+"_REPLY_TOPIC", 0) }
	before := replyStored()
	replier := rcGroupProducer(t, c, "rc-replier-late")
	results := make(chan error, 1)
	report := func(err error) {
		select {
		case results <- err:
		default: // a redelivery: the first outcome counts
		}
	}
	rcConsumer(t, c, "g-req-vanish", topic, "*", func(m *client.MessageExt) {
		_, err := replier.Reply(context.Background(), m, []byte("too late"))
		var be *client.BrokerError
		if !errors.As(err, &be) {
			report(err)
			return
		}
		want := "push reply message fail, channel of <" + m.Property(protocol.PropertyMessageReplyToClient) + "> not found."
		if be.Code != protocol.RespSystemError || be.Remark != want {
			report(be)
			return
		}
		report(nil)
	})
	select {
	case err := <-results:
		if err != nil {
			t.Fatalf("reply to a vanished requester: %v, want SYSTEM_ERROR and Java's remark", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request was never consumed")
	}
	if replyStored() <= before {
		t.Fatal("the reply was not stored (storeReplyMessageEnable)")
	}
}
