package client

import (
	"bytes"
	"context"
	"testing"

	"github.com/runnelmq/runnel/internal/poison"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestSendWireForm checks the form our sends take on the wire: the
// short-key (V2) header in RocketMQ's binary header encoding, for a single
// message (SEND_MESSAGE_V2, as Java's client sends it) and a batch
// (SEND_BATCH_MESSAGE), and that the broker reads them whole: the stored
// messages carry the topic, tags, keys and the id the producer returned.
func TestSendWireForm(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := be.producerOnNewTopic(t, "Wire", 1)
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

// TestBatchBodyGivenBack: a batch's body is a recycled buffer, and the
// send gives it back (overwritten, in a test binary) once it returns,
// whether it was stored or failed; the broker stored what was sent before
// that. A single message's body stays its caller's. (Send and SendAsync
// send through sendWithRetry.)
func TestBatchBodyGivenBack(t *testing.T) {
	be := startRunnel(t, 1, nil)
	p := be.producerOnNewTopic(t, "Recycled", 1)
	inst, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte{'m'}, 1024)
	batch := make([]*Message, 32)
	for i := range batch {
		batch[i] = &Message{Topic: "Recycled", Body: payload}
	}
	send := func(ctx context.Context) (body []byte, err error) {
		t.Helper()
		var r sendRequest
		if err := p.prepareInto(batch, &r); err != nil {
			t.Fatal(err)
		}
		if r.pooled == nil || &(*r.pooled)[0] != &r.body[0] {
			t.Fatal("a batch's body is not a recycled buffer")
		}
		body = r.body
		_, err = p.sendWithRetry(ctx, inst, &r, 0, false)
		if r.pooled != nil || r.body != nil {
			t.Fatal("the send returned with the body still the request's")
		}
		return body, err
	}
	overwritten := func(b []byte) bool { return len(bytes.Trim(b, string([]byte{poison.Byte}))) == 0 }

	body, err := send(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !overwritten(body) {
		t.Fatal("a stored batch's body was not given back")
	}
	stored := be.stored(t, 0, "Recycled", 0)
	if len(stored) != len(batch) {
		t.Fatalf("stored %d messages, want %d", len(stored), len(batch))
	}
	for i, m := range stored {
		if !bytes.Equal(m.Body, payload) {
			t.Fatalf("message %d stored as %q...", i, m.Body[:8])
		}
	}
	// A send that fails (its context ended) gives the body back all the
	// same.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if body, err = send(ended); err == nil {
		t.Fatal("a send with an ended context succeeded")
	}
	if !overwritten(body) {
		t.Fatal("a failed batch's body was not given back")
	}

	one := &Message{Topic: "Recycled", Body: payload}
	if _, err := p.Send(context.Background(), one); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Body, bytes.Repeat([]byte{'m'}, 1024)) {
		t.Fatal("a single message's body was overwritten")
	}
}
