package admin

import (
	"context"
	"errors"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestCreateTopicSendsAttributesAsRocketMQ5Does(t *testing.T) {
	ns, ba, bb := twoBrokers(t)
	for _, b := range []*fakeNode{ba, bb} {
		b.reply(protocol.ReqUpdateAndCreateTopic, protocol.RespSuccess, nil, nil)
	}
	a := newAdmin(t, ns.addr())
	if _, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "fifo", Attributes: map[string]string{"message.type": "FIFO", "a": "b"}}); err != nil {
		t.Fatal(err)
	}
	got := ba.requests(protocol.ReqUpdateAndCreateTopic)
	if len(got) != 1 || got[0].Ext["attributes"] != "+a=b,+message.type=FIFO" {
		t.Fatalf("create requests %+v", got)
	}
	if _, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "plain"}); err != nil {
		t.Fatal(err)
	}
	if got := ba.requests(protocol.ReqUpdateAndCreateTopic); len(got) != 2 || got[1].Ext["attributes"] != "" {
		t.Fatalf("a topic without attributes sent %+v", got[1].Ext)
	}
	if _, err := a.CreateTopic(context.Background(), TopicSpec{Topic: "bad", Attributes: map[string]string{"k": "a,b"}}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("attribute with a comma: %v", err)
	}
}
