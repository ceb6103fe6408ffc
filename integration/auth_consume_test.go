//go:build !race

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestAuthConsume consumes with the official push consumer under ACL 2.0:
// a user allowed Sub on the topic and its group gets every message (its
// heartbeat, pulls and offset commits all pass); the same user in a group
// its rules do not name never registers.
func TestAuthConsume(t *testing.T) {
	c := startAuthCluster(t)
	root := aclAdmin(t, c, authRootAK, authRootSK)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := root.CreateTopic(ctx, ouradmin.TopicSpec{Topic: "feed", ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.CreateUser(ctx, ouradmin.Where{}, protocol.UserInfo{Username: "carol", Password: "carolSecret1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.CreateACL(ctx, ouradmin.Where{}, protocol.ACLInfo{Subject: "User:carol", Policies: []protocol.PolicyInfo{{
		Entries: []protocol.PolicyEntryInfo{
			{Resource: "Topic:feed", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
			{Resource: "Group:readers", Actions: []string{"Sub"}, Decision: "Allow"},
		}}}}); err != nil {
		t.Fatal(err)
	}
	carol := primitive.Credentials{AccessKey: "carol", SecretKey: "carolSecret1"}
	p := aclProducer(t, c, &carol)
	const n = 5
	for i := range n {
		if _, err := p.SendSync(ctx, primitive.NewMessage("feed", []byte(fmt.Sprint("m", i)))); err != nil {
			t.Fatal(err)
		}
	}
	// The group without a rule first, so its heartbeat has been tried by
	// the time the permitted group has its messages.
	denied, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer([]string{c.NamesrvAddr()}),
		consumer.WithInstance(instance("auth-denied")),
		consumer.WithGroupName("writers"),
		consumer.WithCredentials(carol),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	other := newCollector()
	if err := denied.Subscribe("feed", consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			other.add(m)
		}
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = denied.Start() // it may fail at its first heartbeat or only log
	t.Cleanup(func() { _ = denied.Shutdown() })

	got := newCollector()
	newPushConsumer(t, c, "readers", "feed", "*", got.add, consumer.WithCredentials(carol))
	testwait.For(t, 60*time.Second, "the permitted group to get every message", func() bool { return got.len() == n })
	testwait.For(t, 30*time.Second, "the group's offsets to be committed", func() bool {
		var sum int64
		for q := int32(0); q < 2; q++ {
			if off, ok := c.Broker(0).ConsumerOffset("readers", "feed", q); ok {
				sum += off
			}
		}
		return sum == n
	})
	if ids := c.Broker(0).ConsumerIDs("writers"); len(ids) != 0 {
		t.Errorf("a group carol's rules do not name registered: %v", ids)
	}
	if other.len() != 0 {
		t.Errorf("the group without a rule got %d messages", other.len())
	}
}
