//go:build !race

package integration

import (
	"context"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/acl"
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
	denied, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer([]string{c.NamesrvAddr()}),
		consumer.WithInstance(instance("acl-denied")),
		consumer.WithGroupName("deniedGroup"),
		consumer.WithCredentials(user),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	deniedGot := newCollector()
	err = denied.Subscribe("aclTopic", consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			deniedGot.add(m)
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = denied.Start() // it may fail at its first heartbeat or only log
	t.Cleanup(func() { _ = denied.Shutdown() })

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
