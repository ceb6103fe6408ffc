//go:build !race

// The RocketMQ 5 SDK races inside itself under -race (it applies the
// server's Settings on its Telemetry goroutine while its producer and
// consumers read them); scripts/test.sh runs this file in its second
// pass, without -race.

package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	rmq5 "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/integration/cluster"
)

// TestV5ACLAllowedAndRefused: the SDK's MQv2-HMAC-SHA1 signature is
// checked against the same plain_acl.yml accounts as remoting requests:
// a signed, permitted send is stored; a send to a topic the account may
// not publish to, a wrong secret and no signature at all are refused
// UNAUTHORIZED, and nothing of theirs is stored.
func TestV5ACLAllowedAndRefused(t *testing.T) {
	c, _ := startACLCluster(t, aclYAML("", "SUB"), lenientNamesrvYAML, cluster.GRPC())
	aclCreateTopics(t, c, "aclTopic", "deniedTopic")
	user := &credentials.SessionCredentials{AccessKey: aclUserAK, AccessSecret: aclUserSK}

	p := newV5ProducerWith(t, v5Config(c, 0, "", user), []string{"aclTopic"})
	v5Send(t, p, &rmq5.Message{Topic: "aclTopic", Body: []byte("allowed")})
	if n := len(readTopic(t, c, 0, "aclTopic")); n != 1 {
		t.Fatalf("aclTopic holds %d messages, want 1", n)
	}

	_, err := p.Send(context.Background(), &rmq5.Message{Topic: "deniedTopic", Body: []byte("denied")})
	var st *rmq5.ErrRpcStatus
	if !errors.As(err, &st) || st.Code != int32(v2.Code_UNAUTHORIZED) || !strings.Contains(st.Message, "deniedTopic") {
		t.Fatalf("send to a topic the account may only subscribe: %v, want UNAUTHORIZED naming the topic", err)
	}
	if n := len(readTopic(t, c, 0, "deniedTopic")); n != 0 {
		t.Fatalf("deniedTopic holds %d messages", n)
	}

	for name, cred := range map[string]*credentials.SessionCredentials{
		"wrong secret": {AccessKey: aclUserAK, AccessSecret: "not-the-secret"},
		"unknown key":  {AccessKey: "nobody-at-all", AccessSecret: "whatever1"},
		"unsigned":     nil,
	} {
		bad, err := rmq5.NewProducer(v5Config(c, 0, "", cred), rmq5.WithTopics("aclTopic"))
		if err != nil {
			t.Fatal(err)
		}
		if err := bad.Start(); err == nil {
			_ = bad.GracefulStop()
			t.Fatalf("%s: the producer started", name)
		} else if !strings.Contains(err.Error(), "Unauthenticated") && !strings.Contains(err.Error(), "UNAUTHORIZED") {
			t.Fatalf("%s: start failed with %v, want a refusal of its signature", name, err)
		}
	}
	if n := len(readTopic(t, c, 0, "aclTopic")); n != 1 {
		t.Fatalf("aclTopic holds %d messages after the refused clients, want 1", n)
	}
}
