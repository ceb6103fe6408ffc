package console_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

func clientConfig(c *cluster.Cluster, name string) client.ClientConfig {
	cfg := client.DefaultClientConfig()
	cfg.NameServerAddrs = c.NamesrvAddrs()
	cfg.InstanceName = fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
	cfg.ClientIP = "127.0.0.1"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RebalanceInterval = 200 * time.Millisecond
	cfg.PersistInterval = 100 * time.Millisecond
	cfg.RouteRefreshInterval = 500 * time.Millisecond
	return cfg
}

// consume runs our push consumer of group on topic until the returned
// stop is called (or the test ends), counting what it consumed.
func consume(t *testing.T, c *cluster.Cluster, group, topic string, n *atomic.Int64) (stop func()) {
	t.Helper()
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = clientConfig(c, group)
	cfg.Group = group
	cfg.ConsumeFrom = offset.ConsumeFromFirstOffset
	cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
		n.Add(int64(len(msgs)))
		return client.ConsumeSuccess
	}
	pc := clitest.StartConsumer(t, cfg, topic, "*")
	return func() { _ = pc.Shutdown(context.Background()) } // a second Shutdown is a no-op
}

// TestBrowserClickThrough clicks through every page as a person would:
// create a topic, send a message, find it by key and by id and read it,
// reset a group's offset and watch its lag fall as a consumer drains it,
// resend a dead letter, and look at the cluster, topics, groups, producers
// and access control pages, with a screenshot of each.
func TestBrowserClickThrough(t *testing.T) {
	e := start(t)
	b := newBrowser(t, e.con.URL())
	const topic, group = "BrowserOrders", "g-browser"

	// Create a topic through the form.
	b.open("/topics")
	b.waitFor("the create form open", `(document.getElementById("create-topic").open = true)`)
	b.fill("#new-topic", topic)
	b.choose(`#create-topic select[name=type]`, "FIFO")
	b.fill(`#create-topic input[name=queues]`, "2")
	b.click("#create")
	b.heading("Topic " + topic)
	b.waitText(".notice", "created on 1 broker")
	b.waitText(".type", "FIFO")
	b.noErrorBox("the new topic's page")

	// Send a message through the form.
	b.fill("#send-tags", "TagA")
	b.fill("#send-keys", "order-42")
	b.fill("#send-body", `{"order": 42, "note": "<script>alert('x')</script>"}`)
	b.click("#send")
	b.waitText("#sent", "Sent: message id")
	msgID := b.text("#sent a")
	if len(msgID) != 32 {
		t.Fatalf("message id on the page: %q", msgID)
	}
	b.screenshot("topic")

	// Find it by key, open it, and see the body as text and as JSON.
	b.click(".crumbs a[href^='/messages']")
	b.heading("Messages")
	b.fill("#key-topic", topic)
	b.fill("#key", "order-42")
	b.click("#find-key")
	b.waitText("#results", msgID)
	b.screenshot("messages-by-key")
	b.click("#results a")
	b.heading("Message " + msgID)
	b.waitText("#body", `<script>alert('x')</script>`) // shown as text
	b.waitFor("no script from the body", `document.scripts.length === 1`)
	b.click("#as-json")
	b.waitText("#body", "\"order\": 42")
	b.screenshot("message")
	// By id: the id a producer reports, with the topic.
	b.open("/messages")
	b.fill("#msgid", msgID)
	b.fill("#id-topic", topic)
	b.click("#find-id")
	b.waitText("#results", msgID)
	b.noErrorBox("find by id")

	// A group that consumed everything, then reset to the head: its lag
	// is the whole topic; a consumer drains it while the page watches.
	for i := range 30 {
		if _, err := e.adm.SendMessage(e.ctx, admin.Send{Topic: topic, Keys: []string{fmt.Sprint("k", i)}, Body: []byte(fmt.Sprint("m", i))}); err != nil {
			t.Fatal(err)
		}
	}
	var consumed atomic.Int64
	stop := consume(t, e.c, group, topic, &consumed)
	waitLag(t, e, group, 0)
	stop()
	b.open("/group?name=" + group)
	b.waitText("#lag", "0")
	b.choose("#reset-topic", topic)
	b.choose("#reset-to", "earliest")
	b.click("#reset")
	b.waitText(".notice", "reset to earliest")
	b.waitText("#lag", "31")
	b.screenshot("group-reset")
	consumed.Store(0)
	consume(t, e.c, group, topic, &consumed)
	b.waitFor("the lag to fall to 0 on the page", `document.getElementById("lag").textContent.trim() === "0"`)
	b.waitText("#clients", "remoting")
	// The chart draws it too: the samples rise to the reset and fall to 0.
	b.waitFor("the lag chart's line down to 0", `document.querySelector("#group-live svg polyline") !== null &&
		[...document.querySelectorAll("#group-live svg text.legend")].some(t => t.textContent === "lag 0")`)
	b.screenshot("group-drained")

	// Dead letters: two of the topic's messages, one resent from the page.
	mq := queue.MessageQueue{Topic: topic, BrokerName: e.c.BrokerName(0), QueueID: 0}
	res, err := e.adm.Pull(e.ctx, mq, 0, 2)
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("pull: %v %v", res, err)
	}
	for _, m := range res.Messages {
		if err := e.c.DeadLetter(e.ctx, 0, group, m); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, time.Minute, "two dead letters stored", func() bool {
		_, total, err := e.adm.DeadLetters(e.ctx, group, 10)
		return err == nil && total == 2
	})
	before := stored(t, e, topic)
	b.open("/dlq")
	b.fill("#dlq-group", group)
	b.click("#dlq-show")
	b.waitText("#dead-letters", res.Messages[0].MsgID)
	b.screenshot("dead-letters")
	b.click("#dead-letters .resend-one")
	b.waitText(".notice", "Re-sent 1 dead letter")
	if after := stored(t, e, topic); after != before+1 {
		t.Fatalf("%s holds %d messages after one resend, %d before", topic, after, before)
	}

	// The other pages, each with data on it.
	p := producer(t, e.c, "pg-browser")
	if _, err := p.Send(e.ctx, &client.Message{Topic: topic, Body: []byte("from a producer")}); err != nil {
		t.Fatal(err)
	}
	b.open("/producers?group=pg-browser")
	b.waitText("#producers", "pg-browser")
	b.screenshot("producers")
	b.open("/topics")
	b.waitText("#topic-list", topic)
	b.waitFor("a rate in the topic list", `[...document.querySelectorAll("#topic-list td.num")].some(td => td.textContent.includes("/s"))`)
	b.screenshot("topics")
	b.fill("#q", "nothing-like-this")
	b.click("form.search button")
	b.waitText("#topic-list", "No topic matches")
	b.open("/groups")
	b.waitText("#group-list", group)
	b.screenshot("groups")
	b.open("/cluster")
	b.waitText("#brokers", e.c.BrokerName(0))
	b.waitFor("the cluster chart's lines", `document.querySelectorAll("#overview svg polyline").length === 2`)
	b.screenshot("cluster")
	b.open("/acl")
	b.waitText("#acl-off", "not enabled")
	b.screenshot("acl-off")
}

func waitLag(t *testing.T, e *env, group string, want int64) {
	t.Helper()
	testwait.For(t, time.Minute, fmt.Sprintf("lag %d of %s", want, group), func() bool {
		rows, err := e.adm.ConsumerProgress(e.ctx, group, "")
		return err == nil && admin.TotalLag(rows) == want
	})
}

func stored(t *testing.T, e *env, topic string) int64 {
	t.Helper()
	stats, err := e.adm.TopicStats(e.ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range stats {
		n += s.MaxOffset
	}
	return n
}

func producer(t *testing.T, c *cluster.Cluster, group string) *client.Producer {
	t.Helper()
	cfg := client.DefaultProducerConfig()
	cfg.Client = clientConfig(c, group)
	cfg.Group = group
	return clitest.StartProducer(t, cfg)
}
