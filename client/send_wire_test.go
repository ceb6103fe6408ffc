package client

import (
	"context"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestSendWireForm checks the form our sends take on the wire: the
// short-key (V2) header in RocketMQ's binary header encoding, for a single
// message (SEND_MESSAGE_V2, as Java's client sends it) and a batch
// (SEND_BATCH_MESSAGE), and that the broker reads them whole: the stored
// messages carry the topic, tags, keys and the id the producer returned.
func TestSendWireForm(t *testing.T) {
	be := startRunnel(t, 1, nil)
	be.createTopic(t, "Wire", 1)
	p := startProducer(t, be.ns, nil)
	ctx := context.Background()
	single, err := p.Send(ctx, &Message{Topic: "Wire", Tags: "TagA", Keys: []string{"k1"}, Body: []byte("one")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &Message{Topic: "Wire", Tags: "TagB", Body: []byte("two")}, &Message{Topic: "Wire", Tags: "TagB", Body: []byte("three")}); err != nil {
		t.Fatal(err)
	}
	sends := be.taps[0].Requests(func(req *protocol.Command) bool {
		return req.Code == protocol.ReqSendMessage || req.Code == protocol.ReqSendMessageV2 || req.Code == protocol.ReqSendBatchMessage
	})
	if len(sends) != 2 {
		t.Fatalf("broker saw %d sends, want 2", len(sends))
	}
	for i, want := range []int16{protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage} {
		req := sends[i]
		if req.Code != want || req.SerializeType != protocol.SerializeRocketMQ {
			t.Errorf("send %d: code %d serialize %d, want %d in %d", i, req.Code, req.SerializeType, want, protocol.SerializeRocketMQ)
		}
		if req.Ext("b") != "Wire" || req.Ext("topic") != "" {
			t.Errorf("send %d: ext %v, want V2 short keys only", i, req.Fields())
		}
	}
	msgs := be.stored(t, 0, "Wire", 0)
	if len(msgs) != 3 {
		t.Fatalf("stored %d messages, want 3", len(msgs))
	}
	m := msgs[0]
	if m.Topic != "Wire" || string(m.Body) != "one" || m.Properties[protocol.PropertyTags] != "TagA" ||
		m.Properties[protocol.PropertyKeys] != "k1" || m.Properties[protocol.PropertyUniqClientMessageIDKey] != single.MsgID {
		t.Errorf("stored single %+v, want topic Wire, body one, TagA, k1, id %s", m, single.MsgID)
	}
	for i, body := range []string{"two", "three"} {
		if got := msgs[i+1]; string(got.Body) != body || got.Properties[protocol.PropertyTags] != "TagB" {
			t.Errorf("stored batch message %d: body %q tags %q", i, got.Body, got.Properties[protocol.PropertyTags])
		}
	}
}
