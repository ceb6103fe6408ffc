package broker

import (
	"context"
	"testing"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestPopUnderPlainACL: with plain ACL on, an account with SUB on the
// topic and the group pops and acknowledges; one denied the group is
// refused its pop and its ack.
func TestPopUnderPlainACL(t *testing.T) {
	file := clitest.WriteFile(t, "plain_acl.yml", `accounts:
  - {accessKey: adminAK, secretKey: adminSecret1, admin: true}
  - {accessKey: readerAK, secretKey: readerSecret1, defaultTopicPerm: DENY, defaultGroupPerm: DENY, topicPerms: [T=SUB], groupPerms: [g=SUB]}
  - {accessKey: strangerAK, secretKey: strangerSecret1, defaultTopicPerm: DENY, defaultGroupPerm: DENY, topicPerms: [T=SUB]}
`)
	b := startBrokerAt(t, t.TempDir(), func(cfg *config.Config) { cfg.ACLEnable, cfg.ACLFile = true, file })
	call := func(ak, sk string, code int16, ext map[string]string, body []byte) *protocol.Command {
		t.Helper()
		cl := remoting.NewClient(remoting.ClientConfig{Logger: testLogger(),
			Interceptors: acl.Credentials{AccessKey: ak, SecretKey: sk}.Interceptor()})
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := cl.Invoke(ctx, b.Addr(), protocol.NewRequest(code, ext, body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	admin := func(code int16, ext map[string]string, body []byte) *protocol.Command {
		return call("adminAK", "adminSecret1", code, ext, body)
	}
	expect(t, admin(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{Topic: "T", DefaultTopic: "TBW102",
		ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(), nil), protocol.RespSuccess, "")
	expect(t, admin(protocol.ReqSendMessage, sendHeader("T", 0, nil).Encode(), []byte("x")), protocol.RespSuccess, "")

	pop := popHeader("g", "T", 0, 1, time.Minute).Encode()
	// Plain ACL refuses as Java's does: SYSTEM_ERROR, its AclException.
	expect(t, call("strangerAK", "strangerSecret1", protocol.ReqPopMessage, pop, nil), protocol.RespSystemError, "permission for group:g")
	resp := call("readerAK", "readerSecret1", protocol.ReqPopMessage, pop, nil)
	expect(t, resp, protocol.RespSuccess, "")
	msgs, err := message.DecodeMessages(resp.Body)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("popped %d, %v", len(msgs), err)
	}
	m := msgs[0]
	ack := protocol.AckMessageRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: m.QueueID, Offset: m.QueueOffset,
		ExtraInfo: m.Property(message.PropertyPopCK)}.Encode()
	expect(t, call("strangerAK", "strangerSecret1", protocol.ReqAckMessage, ack, nil), protocol.RespSystemError, "permission for group:g")
	expect(t, call("readerAK", "readerSecret1", protocol.ReqAckMessage, ack, nil), protocol.RespSuccess, "")
}
