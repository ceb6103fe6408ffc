package broker

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestSendValidation(t *testing.T) {
	_, rc := withTopicConfig(t, "Two", 2, func(c *config.Config) { c.MaxMessageSize = 1024 })

	longProps := map[string]string{"big": strings.Repeat("x", 40000)}
	cases := []struct {
		name   string
		hdr    map[string]string
		reqCod int16
		body   []byte
		want   int16
		remark string
	}{
		{name: "illegal chars", hdr: sendHeader("bad topic!", 0, nil).Encode(), want: protocol.RespSystemError, remark: "illegal characters"},
		{name: "too long", hdr: sendHeader(strings.Repeat("t", 128), 0, nil).Encode(), want: protocol.RespSystemError, remark: "longer than topic max length"},
		{name: "blank", hdr: sendHeader(" ", 0, nil).Encode(), want: protocol.RespSystemError, remark: "blank"},
		{name: "TBW102", hdr: sendHeader("TBW102", 0, nil).Encode(), want: protocol.RespSystemError, remark: "conflict with system reserved words"},
		{name: "schedule topic", hdr: sendHeader("SCHEDULE_TOPIC_XXXX", 0, nil).Encode(), want: protocol.RespNoPermission, remark: "is forbidden"},
		{name: "body too big", hdr: sendHeader("Two", 0, nil).Encode(), body: make([]byte, 1025), want: protocol.RespMessageIllegal, remark: "msg body length limit 1024B"},
		{name: "queue out of range", hdr: sendHeader("Two", 2, nil).Encode(), want: protocol.RespSystemError, remark: "queueId[2] is illegal"},
		{name: "properties too long", hdr: sendHeader("Two", 0, longProps).Encode(), want: protocol.RespMessageIllegal, remark: "properties"},
		{name: "missing field", hdr: map[string]string{"topic": "Two"}, want: protocol.RespSystemError, remark: "missing"},
		{name: "bad number", hdr: func() map[string]string {
			h := sendHeader("Two", 0, nil).Encode()
			h["queueId"] = "x"
			return h
		}(), want: protocol.RespSystemError, remark: "queueId"},
		{name: "bad batch", reqCod: protocol.ReqSendBatchMessage, hdr: sendHeader("Two", 0, nil).EncodeV2(), body: []byte{0, 0, 0, 9, 1}, want: protocol.RespMessageIllegal, remark: "batch"},
		{name: "batch to retry topic", reqCod: protocol.ReqSendBatchMessage, hdr: sendHeader("%RETRY%g", 0, nil).EncodeV2(),
			body: mustBatch(t, []*protocol.Message{{Body: []byte("x")}}), want: protocol.RespMessageIllegal, remark: "retry group"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := tc.reqCod
			if code == 0 {
				code = protocol.ReqSendMessage
			}
			body := tc.body
			if body == nil {
				body = []byte("hello")
			}
			expect(t, rc.call(code, tc.hdr, body), tc.want, tc.remark)
		})
	}
}

// TestSendBatchOverMaxMessageSize: a batch is checked whole against
// maxMessageSize, as Java does: many small messages over the limit
// together are refused with MESSAGE_ILLEGAL and none is stored.
func TestSendBatchOverMaxMessageSize(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.MaxMessageSize = 1024 })
	rc := newRawClient(t, b.Addr())
	rc.createTopic("Batch", 1)
	small := func(n int) []*protocol.Message {
		msgs := make([]*protocol.Message, n)
		for i := range msgs {
			msgs[i] = &protocol.Message{Body: []byte("0123456789")}
		}
		return msgs
	}
	h := sendHeader("Batch", 0, nil)
	h.Batch = true
	over := mustBatch(t, small(100))
	if len(over) <= 1024 {
		t.Fatalf("the batch is %d bytes, want over the limit", len(over))
	}
	expect(t, rc.call(protocol.ReqSendBatchMessage, h.EncodeV2(), over), protocol.RespMessageIllegal, "msg body length limit 1024B")
	if got := b.core.MaxOffset("Batch", 0); got != 0 {
		t.Fatalf("queue max offset %d after the refused batch, want 0", got)
	}
	under := mustBatch(t, small(5))
	expect(t, rc.call(protocol.ReqSendBatchMessage, h.EncodeV2(), under), protocol.RespSuccess, "")
	if got := b.core.MaxOffset("Batch", 0); got != 5 {
		t.Fatalf("queue max offset %d after a batch of 5, want 5", got)
	}
}

func TestSendAutoCreateDisabled(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.AutoCreateTopicEnable = false })
	rc := newRawClient(t, b.Addr())
	expect(t, rc.send("Nope", 0, "", "x"), protocol.RespTopicNotExist, "not exist")
	if _, ok := b.core.Topic("TBW102"); ok {
		t.Error("TBW102 exists with auto-create disabled")
	}
}

func TestSendAutoCreateAndPull(t *testing.T) {
	b, rc := withClient(t)

	// Auto-created from TBW102 with the requested 4 queues, perm RW.
	resp := rc.send("Auto", -1, "TagA", "one")
	expect(t, resp, protocol.RespSuccess, "")
	tc, ok := b.core.Topic("Auto")
	if !ok || tc.WriteQueueNums != 4 || tc.Perm != protocol.PermRead|protocol.PermWrite {
		t.Fatalf("auto-created topic %+v %v", tc, ok)
	}
	var sh protocol.SendMessageResponseHeader
	if err := sh.Decode(resp.ExtFields); err != nil {
		t.Fatal(err)
	}
	host, phys, err := message.ParseOffsetMsgID(sh.MsgID)
	if err != nil || host.String() != b.AdvertisedAddr() || phys < 0 {
		t.Fatalf("msgId %q: %v %d %v", sh.MsgID, host, phys, err)
	}
	if sh.TransactionID == "" || sh.MsgRegion != "DefaultRegion" || sh.TraceOn != "true" {
		t.Fatalf("response header %+v", sh)
	}

	// A batch of three to the same queue: comma-joined ids, first offset.
	batch := mustBatch(t, []*protocol.Message{
		{Body: []byte("b0"), Properties: map[string]string{"TAGS": "B"}},
		{Body: []byte("b1"), Properties: map[string]string{"TAGS": "B"}},
		{Flag: 7, Body: []byte("b2"), Properties: map[string]string{"TAGS": "C", "KEYS": "k2"}},
	})
	h := sendHeader("Auto", sh.QueueID, nil)
	h.Batch = true
	resp = rc.call(protocol.ReqSendBatchMessage, h.EncodeV2(), batch)
	expect(t, resp, protocol.RespSuccess, "")
	var bh protocol.SendMessageResponseHeader
	if err := bh.Decode(resp.ExtFields); err != nil {
		t.Fatal(err)
	}
	if ids := strings.Split(bh.MsgID, ","); len(ids) != 3 || bh.QueueOffset != sh.QueueOffset+1 {
		t.Fatalf("batch response %+v", bh)
	}

	// Pull with the subscription in the request (pull consumer style).
	ph := pullHeader("g", "Auto", sh.QueueID, 0, 32, protocol.PullFlagSubscription)
	ph.Subscription = "*"
	resp = rc.call(protocol.ReqPullMessage, ph.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "FOUND")
	msgs, err := message.DecodeMessages(resp.Body)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("pulled %d messages: %v", len(msgs), err)
	}
	if m := msgs[0]; string(m.Body) != "one" || m.Tags() != "TagA" || m.UniqKey() != sh.TransactionID ||
		m.Property(protocol.PropertyCluster) != "DefaultCluster" || m.StoreHost.String() != b.AdvertisedAddr() {
		t.Fatalf("first message %+v", m)
	}
	if m := msgs[3]; string(m.Body) != "b2" || m.Flag != 7 || m.Keys()[0] != "k2" || m.QueueOffset != sh.QueueOffset+3 {
		t.Fatalf("last message %+v", m)
	}
	var pr protocol.PullMessageResponseHeader
	if err := pr.Decode(resp.ExtFields); err != nil || pr.NextBeginOffset != 4 || pr.MaxOffset != 4 {
		t.Fatalf("pull header %+v %v", pr, err)
	}
}

func TestSendCompressedBodyPassesThrough(t *testing.T) {
	_, rc := withTopic(t, "Z", 1)
	plain := bytes.Repeat([]byte("compress me "), 1000)
	z, err := message.Compress(plain, 5)
	if err != nil {
		t.Fatal(err)
	}
	h := sendHeader("Z", 0, nil)
	h.SysFlag = protocol.SysFlagCompressed
	expect(t, rc.call(protocol.ReqSendMessage, h.Encode(), z), protocol.RespSuccess, "")
	ph := pullHeader("g", "Z", 0, 0, 32, protocol.PullFlagSubscription)
	resp := rc.call(protocol.ReqPullMessage, ph.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	raw, err := message.DecodeMessagesRaw(resp.Body)
	if err != nil || len(raw) != 1 || !bytes.Equal(raw[0].Body, z) || raw[0].SysFlag&protocol.SysFlagCompressed == 0 {
		t.Fatalf("stored body not passed through: %v", err)
	}
	inflated, _ := message.DecodeMessages(resp.Body)
	if !bytes.Equal(inflated[0].Body, plain) {
		t.Fatal("body does not inflate to the original")
	}
}

func TestUnknownRequestCode(t *testing.T) {
	_, rc := withClient(t)
	expect(t, rc.call(9999, nil, nil), protocol.RespRequestCodeNotSupported, "9999")
}

// mustBatch encodes a SEND_BATCH_MESSAGE body.
func mustBatch(t testing.TB, msgs []*protocol.Message) []byte {
	t.Helper()
	b, err := protocol.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSendToRetryTopicCreatesIt(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.AutoCreateTopicEnable = false })
	rc := newRawClient(t, b.Addr())
	h := sendHeader("%RETRY%grp", 0, map[string]string{"RETRY_TOPIC": "T", "DELAY": "3"})
	h.ReconsumeTimes = 1
	h.MaxReconsumeTimes = 16
	expect(t, rc.call(protocol.ReqSendMessage, h.Encode(), []byte("again")), protocol.RespSuccess, "")
	tc, ok := b.core.Topic("%RETRY%grp")
	if !ok || tc.WriteQueueNums != 1 || tc.Perm != protocol.PermRead|protocol.PermWrite {
		t.Fatalf("retry topic %+v %v", tc, ok)
	}
}

// A producer's send to a %RETRY% topic (the client's fallback when
// CONSUMER_SEND_MSG_BACK fails) goes to the DLQ once its reconsume count
// exceeds the request's maxReconsumeTimes, or the group default (16) when
// the request has none.
func TestRetrySendMaxReconsumeTimes(t *testing.T) {
	b, rc := withClient(t)
	send := func(reconsume, max int32) {
		t.Helper()
		h := sendHeader("%RETRY%g", 0, map[string]string{"RETRY_TOPIC": "T"})
		h.ReconsumeTimes = reconsume
		h.MaxReconsumeTimes = max // -1: the key is left out
		expect(t, rc.call(protocol.ReqSendMessage, h.Encode(), []byte("r")), protocol.RespSuccess, "")
	}
	dlq := func() int64 { return b.Store().MaxOffset("%DLQ%g", 0) }
	send(3, 2) // over the request's maximum
	if dlq() != 1 {
		t.Fatalf("reconsume 3 > max 2 not dead-lettered (DLQ holds %d)", dlq())
	}
	send(3, -1) // no maximum in the request: 16
	if dlq() != 1 {
		t.Fatal("reconsume 3 dead-lettered without a maximum in the request")
	}
	send(17, -1)
	if dlq() != 2 {
		t.Fatalf("reconsume 17 > default 16 not dead-lettered (DLQ holds %d)", dlq())
	}
}

// TestSendBadHeaderBothEncodings: a send header read without its map (the
// typed decode over the raw header) is refused with the field named, in
// the JSON and the binary encoding, and a good one in either is stored.
func TestSendBadHeaderBothEncodings(t *testing.T) {
	_, rc := withTopic(t, "Enc", 1)
	for _, st := range []byte{protocol.SerializeJSON, protocol.SerializeRocketMQ} {
		invoke := func(ext map[string]string) *protocol.Command {
			req := protocol.NewRequest(protocol.ReqSendMessageV2, ext, []byte("hello"))
			req.SerializeType = st
			resp, err := rc.cl.Invoke(context.Background(), rc.addr, req)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		bad := sendHeader("Enc", 0, nil).EncodeV2()
		bad["e"] = "x"
		expect(t, invoke(bad), protocol.RespSystemError, `SEND_MESSAGE_V2 header: e (queueId): invalid integer "x"`)
		delete(bad, "a")
		expect(t, invoke(bad), protocol.RespSystemError, "a (producerGroup): missing")
		expect(t, invoke(sendHeader("Enc", 0, map[string]string{"TAGS": "t"}).EncodeV2()), protocol.RespSuccess, "")
	}
}
