package core

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/faultfs"
	"github.com/runnelmq/runnel/topicconf"
)

func sendReq(topic string, queue int32, body string) SendRequest {
	return SendRequest{Topic: topic, QueueID: queue, MaxReconsumeTimes: -1, Client: "test",
		Messages: []SendMessage{{Properties: map[string]string{message.PropertyTags: "t"}, Body: []byte(body)}}}
}

// stored reads back the message at topic/queue/offset.
func stored(t *testing.T, c *testCore, topic string, queue int32, off int64) *message.MessageExt {
	t.Helper()
	g, err := c.Store().Get(topic, queue, off, 1, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Recycle()
	msgs, err := message.DecodeMessages(g.Messages)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("%s/%d@%d: %d messages, %v", topic, queue, off, len(msgs), err)
	}
	return msgs[0]
}

// SendAll stores the sends it accepts in one store write, in order, and
// answers each as Send would: refusals are their request's alone.
func TestSendAllSharesOneWrite(t *testing.T) {
	c := openCore(t, nil)
	for _, topic := range []string{"A", "B"} {
		send(t, c, topic, "", 0) // created here, so the sends below write only messages
	}
	rs := []SendRequest{
		sendReq("A", 1, "a1"),
		sendReq("B", 0, "b1"),
		sendReq("bad topic!", 0, "x"), // refused: illegal name
		sendReq("A", 1, "a2"),
		sendReq("A", 9, "x"), // refused: A has 4 queues
		{Topic: "B", QueueID: 2, MaxReconsumeTimes: -1, Client: "test", Batch: true, Messages: []SendMessage{
			{Body: []byte("b2")}, {Body: []byte("b3")}}},
	}
	before := c.Store().Stats().Syncs
	out := c.SendAll(rs)
	if got := c.Store().Stats().Syncs - before; got != 1 {
		t.Fatalf("SendAll of 4 accepted sends made %d store writes, want 1", got)
	}
	if len(out) != len(rs) {
		t.Fatalf("%d outcomes for %d requests", len(out), len(rs))
	}
	const ok = Reason(255)
	for i, want := range []Reason{ok, ok, InvalidName, ok, BadRequest, ok} {
		if want == ok {
			if out[i].Err != nil {
				t.Fatalf("request %d: %v", i, out[i].Err)
			}
			continue
		}
		var e *Error
		if !errors.As(out[i].Err, &e) || e.Reason != want {
			t.Fatalf("request %d: got %v, want %v", i, out[i].Err, want)
		}
	}
	// Where each went, and that the body there is its own.
	for _, w := range []struct {
		i      int
		queue  int32
		offset int64
		bodies []string
	}{{0, 1, 0, []string{"a1"}}, {1, 0, 1, []string{"b1"}}, {3, 1, 1, []string{"a2"}}, {5, 2, 0, []string{"b2", "b3"}}} {
		r := out[w.i].Result
		if r.QueueID != w.queue || r.QueueOffset != w.offset || len(r.MsgIDs) != len(w.bodies) {
			t.Fatalf("request %d: %+v, want queue %d offset %d with %d ids", w.i, r, w.queue, w.offset, len(w.bodies))
		}
		for k, body := range w.bodies {
			m := stored(t, c, rs[w.i].Topic, w.queue, w.offset+int64(k))
			if string(m.Body) != body || m.OffsetMsgID != r.MsgIDs[k] {
				t.Fatalf("request %d message %d: stored %q id %s, answered id %s", w.i, k, m.Body, m.OffsetMsgID, r.MsgIDs[k])
			}
		}
		if rs[w.i].Batch == (r.TransactionID != "") {
			t.Fatalf("request %d: transaction id %q", w.i, r.TransactionID)
		}
	}
}

// A message the store refuses fails its own request only: the others are
// stored one by one.
func TestSendAllIsolatesABadMessage(t *testing.T) {
	c := openCore(t, func(_ *Config, o *store.Options) { o.MaxMessageSize = 64 << 10 })
	send(t, c, "A", "", 0)
	big := string(bytes.Repeat([]byte("x"), 100<<10)) // within the broker's limit, over the store's
	rs := []SendRequest{sendReq("A", 0, "ok1"), sendReq("A", 0, big), sendReq("A", 0, "ok2")}
	out := c.SendAll(rs)
	var e *Error
	if !errors.As(out[1].Err, &e) || e.Reason != IllegalMessage {
		t.Fatalf("the oversized message: %v, want MESSAGE_ILLEGAL", out[1].Err)
	}
	for i, body := range map[int]string{0: "ok1", 2: "ok2"} {
		if out[i].Err != nil {
			t.Fatalf("request %d: %v", i, out[i].Err)
		}
		if m := stored(t, c, "A", 0, out[i].Result.QueueOffset); string(m.Body) != body {
			t.Fatalf("request %d stored %q", i, m.Body)
		}
	}
	if out[0].Result.QueueOffset+1 != out[2].Result.QueueOffset {
		t.Fatalf("the good sends at %d and %d, want them one after the other",
			out[0].Result.QueueOffset, out[2].Result.QueueOffset)
	}
}

// A store that refuses the write (a full disk) fails every accepted
// request, with Send's answer; the refused ones keep their own.
func TestSendAllStoreFailure(t *testing.T) {
	fs := faultfs.New(vfs.NewMem(), 1<<40, 99)
	c := openCore(t, func(_ *Config, o *store.Options) { o.FS = fs })
	if err := c.CreateTopic(topicconf.Config{TopicName: "A", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}, "test"); err != nil {
		t.Fatal(err)
	}
	out := c.SendAll([]SendRequest{sendReq("A", 0, "1"), sendReq("A", 99, "2"), sendReq("A", 1, "3")})
	for i, reason := range []Reason{Unavailable, BadRequest, Unavailable} {
		var e *Error
		if !errors.As(out[i].Err, &e) || e.Reason != reason {
			t.Fatalf("request %d: %v, want %v", i, out[i].Err, reason)
		}
		if out[i].Result.MsgIDs != nil {
			t.Fatalf("request %d has a result: %+v", i, out[i].Result)
		}
	}
}
