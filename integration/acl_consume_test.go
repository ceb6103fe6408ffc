//go:build !race

// The official push consumer under plain ACL and ACL 2.0. Its consumers
// race inside themselves; see consumer_test.go.

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestACLConsume consumes with the official push consumer: the right
// credentials in a permitted group get every message; a group the account
// may not subscribe with is refused at its heartbeat and its pulls, with
// Java's code and remark, and never registers.
func TestACLConsume(t *testing.T) {
	c, _ := startACLCluster(t, aclYAML("", "DENY"), lenientNamesrvYAML)
	aclCreateTopics(t, c, "aclTopic")
	user := primitive.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK}
	p := aclProducer(t, c, &user)
	const n = 5
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := p.SendSync(ctx, primitive.NewMessage("aclTopic", []byte(fmt.Sprint("m", i))))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}

	// The denied group first, so its heartbeat has been tried by the time
	// the permitted group has its messages.
	deniedGot := startRefused(t, c, "deniedGroup", "aclTopic", consumer.WithCredentials(user))

	got := newCollector()
	newPushConsumer(t, c, "aclGroup", "aclTopic", "*", got.add, consumer.WithCredentials(user))
	testwait.For(t, 60*time.Second, "the permitted group to get every message", func() bool { return got.len() == n })

	if ids := c.Broker(0).ConsumerIDs("deniedGroup"); len(ids) != 0 {
		t.Errorf("deniedGroup registered: %v", ids)
	}
	if deniedGot.len() != 0 {
		t.Errorf("deniedGroup got %d messages", deniedGot.len())
	}

	// The exact answer to a pull in the denied group, signed by the same
	// account.
	rc := remoting.NewClient(remoting.ClientConfig{Interceptors: acl.Credentials{AccessKey: aclUserAK, SecretKey: aclUserSK}.Interceptor()})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := protocol.NewRequest(protocol.ReqPullMessage, map[string]string{
		"consumerGroup": "deniedGroup", "topic": "aclTopic", "queueId": "0", "queueOffset": "0",
		"maxMsgNums": "32", "sysFlag": "0", "commitOffset": "0", "suspendTimeoutMillis": "0", "subVersion": "0",
	}, nil)
	resp, err := rc.Invoke(ctx, c.BrokerAddr(0), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := aclRemarkPrefix + "No permission for group:deniedGroup"; resp.Code != protocol.RespSystemError || resp.Remark != want {
		t.Errorf("pull in deniedGroup: %d %q, want 1 %q", resp.Code, resp.Remark, want)
	}
}

// TestAuthConsume consumes with the official push consumer under ACL 2.0:
// a user allowed Sub on the topic and its group gets every message (its
// heartbeat, pulls and offset commits all pass); the same user in a group
// its rules do not name never registers.
func TestAuthConsume(t *testing.T) {
	c := startAuthCluster(t)
	createTopicsAs(t, c, authRootAK, authRootSK, "feed")
	root := aclAdmin(t, c, authRootAK, authRootSK)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createUserWith(t, ctx, root, "carol", "carolSecret1",
		protocol.PolicyEntryInfo{Resource: "Topic:feed", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
		protocol.PolicyEntryInfo{Resource: "Group:readers", Actions: []string{"Sub"}, Decision: "Allow"})
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
	other := startRefused(t, c, "writers", "feed", consumer.WithCredentials(carol))

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
