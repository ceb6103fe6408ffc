package client

import (
	"errors"
	"testing"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestNewReplyMessageNeedsTheCluster(t *testing.T) {
	req := &MessageExt{}
	req.Properties = map[string]string{protocol.PropertyCorrelationID: "c1", protocol.PropertyMessageReplyToClient: "me@1", protocol.PropertyMessageTTL: "3"}
	if _, err := NewReplyMessage(req, []byte("x")); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("reply to a request without CLUSTER: %v", err)
	}
	req.Properties[protocol.PropertyCluster] = "C"
	m, err := NewReplyMessage(req, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != "C_REPLY_TOPIC" || m.Properties[protocol.PropertyMessageType] != "reply" ||
		m.Properties[protocol.PropertyCorrelationID] != "c1" || m.Properties[protocol.PropertyMessageReplyToClient] != "me@1" ||
		m.Properties[protocol.PropertyMessageTTL] != "3" {
		t.Fatalf("reply message %+v", m)
	}
}

func TestDecodePushedReply(t *testing.T) {
	z, err := message.Compress([]byte("hello"), 5)
	if err != nil {
		t.Fatal(err)
	}
	req := protocol.NewRequest(protocol.ReqPushReplyMessageToClient, map[string]string{
		"topic": "C_REPLY_TOPIC", "queueId": "0", "sysFlag": "1", "flag": "7", "bornTimestamp": "11", "storeTimestamp": "12",
		"bornHost": "/10.0.0.1:4000", "storeHost": "127.0.0.1:10911", "reconsumeTimes": "0",
		"properties": message.MarshalProperties(map[string]string{protocol.PropertyCorrelationID: "c1"}),
	}, z)
	m, err := decodePushedReply(req)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Body) != "hello" || m.Flag != 7 || m.BornHost.String() != "10.0.0.1:4000" || m.StoreHost.String() != "127.0.0.1:10911" ||
		m.Property(protocol.PropertyCorrelationID) != "c1" || m.Property(protocol.PropertyReplyMessageArriveTime) == "" {
		t.Fatalf("decoded %+v", m)
	}
	if _, err := decodePushedReply(protocol.NewRequest(protocol.ReqPushReplyMessageToClient, nil, nil)); err == nil {
		t.Fatal("a push without topic decoded")
	}
	bad := protocol.NewRequest(protocol.ReqPushReplyMessageToClient, map[string]string{"topic": "T", "sysFlag": "1"}, []byte("not zlib"))
	if _, err := decodePushedReply(bad); err == nil {
		t.Fatal("a bad compressed body decoded")
	}
}
