package broker

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The remoting door's RocketMQ 5 POP requests, over a socket with a raw
// client that speaks as Java 5's remoting POP consumer does (the official
// Go client v2 has no POP consumer).

func popHeader(group, topic string, q int32, max int32, invisible time.Duration) protocol.PopMessageRequestHeader {
	return protocol.PopMessageRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: q, MaxMsgNums: max,
		InvisibleTime: invisible.Milliseconds(), BornTime: time.Now().UnixMilli(), InitMode: protocol.ConsumeInitModeMax}
}

// popped is a POP answer as a Java client reads it.
type popped struct {
	resp *protocol.Command
	hdr  protocol.PopMessageResponseHeader
	msgs []*message.MessageExt
}

func (rc *rawClient) pop(h protocol.PopMessageRequestHeader) popped {
	rc.t.Helper()
	resp := rc.callTimeout(protocol.ReqPopMessage, h.Encode(), nil, 30*time.Second)
	p := popped{resp: resp}
	if resp.Code != protocol.RespSuccess {
		return p
	}
	if err := p.hdr.Decode(resp.Fields()); err != nil {
		rc.t.Fatalf("POP answer header: %v", err)
	}
	msgs, err := message.DecodeMessages(resp.Body)
	if err != nil {
		rc.t.Fatalf("POP answer body: %v", err)
	}
	p.msgs = msgs
	return p
}

// ack acknowledges m as Java's client does: the real topic (the retry
// topic's name for a message that came back through it), the queue and
// offset, and POP_CK as extraInfo.
func (rc *rawClient) ack(group, topic string, m *message.MessageExt) *protocol.Command {
	rc.t.Helper()
	h, err := pop.ParseHandle(m.Property(message.PropertyPopCK))
	if err != nil {
		rc.t.Fatalf("POP_CK %q: %v", m.Property(message.PropertyPopCK), err)
	}
	return rc.call(protocol.ReqAckMessage, protocol.AckMessageRequestHeader{ConsumerGroup: group,
		Topic: pop.RealTopic(h.TopicType, group, topic), QueueID: m.QueueID, Offset: m.QueueOffset,
		ExtraInfo: m.Property(message.PropertyPopCK)}.Encode(), nil)
}

func popBodies(msgs []*message.MessageExt) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Body)+"#"+strconv.Itoa(int(m.ReconsumeTimes)))
	}
	slices.Sort(out)
	return out
}

// TestPopOverTheWire: POP_MESSAGE answers with Java's header and each
// message's handle in POP_CK; ACK_MESSAGE, BATCH_ACK_MESSAGE and
// CHANGE_MESSAGE_INVISIBLETIME take the handles a Java client builds;
// a message not acknowledged in time comes back through the retry topic;
// a stale handle is refused.
func TestPopOverTheWire(t *testing.T) {
	clock := fakeclock.Default()
	b, rc := withTopicConfig(t, "T", 2, func(c *config.Config) { c.Now = clock.Now })
	for i, body := range []string{"a", "b", "c", "d"} {
		expect(t, rc.send("T", int32(i%2), "", body), protocol.RespSuccess, "")
	}
	p := rc.pop(popHeader("g", "T", -1, 32, time.Minute))
	expect(t, p.resp, protocol.RespSuccess, "")
	if got := popBodies(p.msgs); strings.Join(got, " ") != "a#0 b#0 c#0 d#0" {
		t.Fatalf("popped %v", got)
	}
	if p.hdr.PopTime != clock.Now().UnixMilli() || p.hdr.InvisibleTime != 60000 || p.hdr.ReviveQid != 0 || p.hdr.RestNum != 0 {
		t.Fatalf("header %+v", p.hdr)
	}
	// Java's client parses these: entries "type queue offset[,offset]".
	for _, info := range []string{p.hdr.StartOffsetInfo, p.hdr.MsgOffsetInfo} {
		for _, e := range strings.Split(info, ";") {
			if f := strings.Split(e, " "); len(f) != 3 || f[0] != "0" {
				t.Fatalf("offset info %q", info)
			}
		}
	}
	by := map[string]*message.MessageExt{}
	for _, m := range p.msgs {
		if m.Topic != "T" || m.Property(message.PropertyPopCK) == "" {
			t.Fatalf("popped message %s/%d: %v", m.Topic, m.QueueID, m.Properties)
		}
		by[string(m.Body)] = m
	}
	expect(t, rc.pop(popHeader("g", "T", -1, 32, time.Minute)).resp, protocol.RespPollingTimeout, "")

	expect(t, rc.ack("g", "T", by["a"]), protocol.RespSuccess, "")
	expect(t, rc.ack("g", "T", by["a"]), protocol.RespNoMessage, "is in flight from T")

	// A change of invisible time: the client builds the new handle from
	// the answer's header (8 fields), and the old one is refused.
	mb := by["b"]
	resp := rc.call(protocol.ReqChangeMessageInvisibleTime, protocol.ChangeInvisibleTimeRequestHeader{ConsumerGroup: "g",
		Topic: "T", QueueID: mb.QueueID, Offset: mb.QueueOffset, ExtraInfo: mb.Property(message.PropertyPopCK),
		InvisibleTime: 120000}.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	var ch protocol.ChangeInvisibleTimeResponseHeader
	if err := ch.Decode(resp.Fields()); err != nil || ch.InvisibleTime != 120000 || ch.PopTime <= p.hdr.PopTime-1 {
		t.Fatalf("change answer %+v, %v", ch, err)
	}
	old, _ := pop.ParseHandle(mb.Property(message.PropertyPopCK))
	fresh := pop.Handle{CkOffset: old.CkOffset, PopTime: ch.PopTime, Invisible: ch.InvisibleTime, ReviveQueue: ch.ReviveQid,
		BrokerName: old.BrokerName, QueueID: mb.QueueID, QueueOffset: mb.QueueOffset, CommitLogOffset: -1}
	expect(t, rc.ack("g", "T", mb), protocol.RespNoMessage, "")

	// BATCH_ACK_MESSAGE: the changed b and c in one body.
	mc := by["c"]
	ba := func(m *message.MessageExt, popTime, invisible int64, start int64) protocol.BatchAck {
		a := protocol.BatchAck{ConsumerGroup: "g", Topic: "T", Retry: "0", StartOffset: start, QueueID: m.QueueID,
			PopTime: popTime, InvisibleTime: invisible}
		a.SetOffsets([]int64{m.QueueOffset})
		return a
	}
	cHandle, _ := pop.ParseHandle(mc.Property(message.PropertyPopCK))
	body := protocol.BatchAckBody{BrokerName: "broker-a", Acks: []protocol.BatchAck{
		ba(mb, fresh.PopTime, fresh.Invisible, fresh.CkOffset), ba(mc, cHandle.PopTime, cHandle.Invisible, cHandle.CkOffset)}}
	expect(t, rc.call(protocol.ReqBatchAckMessage, nil, body.Encode()), protocol.RespSuccess, "")
	expect(t, rc.call(protocol.ReqBatchAckMessage, nil, body.Encode()), protocol.RespNoMessage, "2 of 2 acknowledgements refused")

	// d is not acknowledged: after its minute it comes back, once,
	// through the group's retry topic, its reconsume times raised.
	clock.Advance(time.Minute)
	if _, err := b.Core().Due().Step(); err != nil {
		t.Fatal(err)
	}
	back := rc.pop(popHeader("g", "T", -1, 32, time.Minute))
	expect(t, back.resp, protocol.RespSuccess, "")
	if got := popBodies(back.msgs); strings.Join(got, " ") != "d#1" {
		t.Fatalf("came back %v", got)
	}
	h, _ := pop.ParseHandle(back.msgs[0].Property(message.PropertyPopCK))
	if h.TopicType != pop.RetryTopicV1 || back.msgs[0].Topic != "T" {
		t.Fatalf("a message that came back: topic %s, handle %+v", back.msgs[0].Topic, h)
	}
	expect(t, rc.ack("g", "T", back.msgs[0]), protocol.RespSuccess, "")
	if n := b.Core().InFlight("g", "T") + b.Core().InFlight("g", pop.RetryTopic("g", "T")); n != 0 {
		t.Fatalf("%d in flight after every ack", n)
	}
}

// TestPopRefusalsOverTheWire: a malformed extraInfo, a header without its
// required fields, too many messages and a missing topic get clear codes.
func TestPopRefusalsOverTheWire(t *testing.T) {
	b := startBroker(t, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	expect(t, rc.call(protocol.ReqAckMessage, protocol.AckMessageRequestHeader{ConsumerGroup: "g", Topic: "T",
		ExtraInfo: "not a handle"}.Encode(), nil), protocol.RespNoMessage, "receipt handle")
	expect(t, rc.call(protocol.ReqAckMessage, map[string]string{"consumerGroup": "g"}, nil), protocol.RespSystemError, "missing")
	expect(t, rc.call(protocol.ReqBatchAckMessage, nil, []byte("{")), protocol.RespSystemError, "BATCH_ACK_MESSAGE")
	expect(t, rc.pop(popHeader("g", "T", 0, 33, time.Minute)).resp, protocol.RespInvalidParameter, "32")
	expect(t, rc.pop(popHeader("g", "Nope", 0, 1, time.Minute)).resp, protocol.RespTopicNotExist, "")
	late := popHeader("g", "T", 0, 1, time.Minute)
	late.BornTime = time.Now().Add(-time.Minute).UnixMilli()
	expect(t, rc.pop(late).resp, protocol.RespPollingTimeout, "timeout too much")
}

// TestHeldPopAndNotificationOverTheWire: a POP_MESSAGE and a NOTIFICATION
// that find nothing are held and answered when a message arrives.
func TestHeldPopAndNotificationOverTheWire(t *testing.T) {
	b := startBroker(t, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 2)
	note := func(poll time.Duration) protocol.NotificationResponseHeader {
		resp := rc.callTimeout(protocol.ReqNotification, protocol.NotificationRequestHeader{ConsumerGroup: "g", Topic: "T",
			QueueID: -1, PollTime: poll.Milliseconds(), BornTime: time.Now().UnixMilli()}.Encode(), nil, 30*time.Second)
		expect(t, resp, protocol.RespSuccess, "")
		var h protocol.NotificationResponseHeader
		if err := h.Decode(resp.Fields()); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if note(0).HasMsg {
		t.Fatal("a notification for an empty topic has messages")
	}
	held := make(chan popped, 1)
	go func() {
		h := popHeader("g", "T", -1, 32, time.Minute)
		h.PollTime = 20000
		held <- rc.pop(h)
	}()
	testwait.For(t, testwait.Default, "the pop held", func() bool { return b.Core().HeldPops() == 1 })
	expect(t, rc.send("T", 1, "", "x"), protocol.RespSuccess, "")
	p := <-held
	expect(t, p.resp, protocol.RespSuccess, "")
	if got := popBodies(p.msgs); strings.Join(got, " ") != "x#0" {
		t.Fatalf("held pop answered %v", got)
	}
	notes := make(chan protocol.NotificationResponseHeader, 1)
	go func() { notes <- note(20 * time.Second) }()
	testwait.For(t, testwait.Default, "the pop held", func() bool { return b.Core().HeldPops() == 1 })
	expect(t, rc.send("T", 0, "", "y"), protocol.RespSuccess, "")
	if n := <-notes; !n.HasMsg {
		t.Fatal("a held notification answered without messages")
	}
}

// TestFIFOPopOverTheWire: a FIFO group's queue gives one batch at a time,
// in order, with the delivery count in orderCountInfo; the next batch
// comes once the first is acknowledged.
func TestFIFOPopOverTheWire(t *testing.T) {
	b := startBroker(t, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("F", 1)
	g := groupconf.New("fifo")
	g.ConsumeMessageOrderly = true
	gb, _ := json.Marshal(g)
	expect(t, rc.call(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, gb), protocol.RespSuccess, "")
	for i := range 5 {
		expect(t, rc.send("F", 0, "", strconv.Itoa(i)), protocol.RespSuccess, "")
	}
	first := rc.pop(popHeader("fifo", "F", -1, 3, time.Minute))
	expect(t, first.resp, protocol.RespSuccess, "")
	if got := popBodies(first.msgs); strings.Join(got, " ") != "0#0 1#0 2#0" || first.hdr.ReviveQid != pop.OrderlyReviveQueue {
		t.Fatalf("first batch %v, header %+v", got, first.hdr)
	}
	if !strings.Contains(first.hdr.OrderCountInfo, "0 qo0%0 0") {
		t.Fatalf("orderCountInfo %q", first.hdr.OrderCountInfo)
	}
	expect(t, rc.pop(popHeader("fifo", "F", -1, 3, time.Minute)).resp, protocol.RespPollingTimeout, "")
	for _, m := range first.msgs {
		expect(t, rc.ack("fifo", "F", m), protocol.RespSuccess, "")
	}
	next := rc.pop(popHeader("fifo", "F", -1, 3, time.Minute))
	if got := popBodies(next.msgs); strings.Join(got, " ") != "3#0 4#0" {
		t.Fatalf("second batch %v", got)
	}
	if off, _ := b.ConsumerOffset("fifo", "F", 0); off != 3 {
		t.Fatalf("committed %d after the first batch, want 3", off)
	}
}

// TestTopicMessageTypeOverTheWire: UPDATE_AND_CREATE_TOPIC's attributes
// set message.type (mqadmin updateTopic -a +message.type=FIFO), a topic
// config shows it, it survives a restart, later updates without
// attributes keep it, and an unknown attribute is refused.
func TestTopicMessageTypeOverTheWire(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerAt(t, dir, nil)
	rc := newRawClient(t, b.Addr())
	h := protocol.CreateTopicRequestHeader{Topic: "Typed", DefaultTopic: "TBW102", ReadQueueNums: 2, WriteQueueNums: 2,
		Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: "+message.type=FIFO"}
	expect(t, rc.call(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil), protocol.RespSuccess, "")
	h.Attributes, h.ReadQueueNums, h.WriteQueueNums = "", 4, 4
	expect(t, rc.call(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil), protocol.RespSuccess, "")
	bad := h
	bad.Attributes = "+queue.type=BatchCQ"
	expect(t, rc.call(protocol.ReqUpdateAndCreateTopic, bad.Encode(), nil), protocol.RespInvalidParameter, "unsupported attribute")
	typed := func(rc *rawClient) map[string]string {
		resp := rc.call(protocol.ReqGetAllTopicConfig, nil, nil)
		expect(t, resp, protocol.RespSuccess, "")
		var all protocol.TopicConfigSerializeWrapper
		if err := json.Unmarshal(resp.Body, &all); err != nil {
			t.Fatal(err)
		}
		return all.TopicConfigTable["Typed"].Attributes
	}
	if a := typed(rc); a["message.type"] != "FIFO" {
		t.Fatalf("attributes %v", a)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerAt(t, dir, nil)
	rc = newRawClient(t, b.Addr())
	if a := typed(rc); a["message.type"] != "FIFO" {
		t.Fatalf("after restart attributes %v", a)
	}
	h.Attributes = "-message.type"
	expect(t, rc.call(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil), protocol.RespSuccess, "")
	if a := typed(rc); a != nil {
		t.Fatalf("after -message.type attributes %v", a)
	}
}

// TestPopConsumerShownOverTheWire: a POP consumer that heartbeats as Java
// 5's does (CONSUME_POP) is among its group's consumers, and its group's
// progress is what it popped (GET_CONSUME_STATS), the lag what is left.
func TestPopConsumerShownOverTheWire(t *testing.T) {
	b := startBroker(t, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("T", 1)
	for i := range 3 {
		expect(t, rc.send("T", 0, "", strconv.Itoa(i)), protocol.RespSuccess, "")
	}
	hb := protocol.HeartbeatData{ClientID: "pop-client@1", ConsumerDataSet: []protocol.ConsumerData{{
		GroupName: "pg", ConsumeType: "CONSUME_POP", MessageModel: protocol.MessageModelClustering,
		ConsumeFromWhere:    protocol.ConsumeFromFirstOffset,
		SubscriptionDataSet: []protocol.SubscriptionData{{Topic: "T", SubString: "*"}},
	}}}
	body, err := hb.Encode()
	if err != nil {
		t.Fatal(err)
	}
	expect(t, rc.call(protocol.ReqHeartBeat, nil, body), protocol.RespSuccess, "")
	p := rc.pop(popHeader("pg", "T", -1, 2, time.Minute))
	expect(t, p.resp, protocol.RespSuccess, "")

	resp := rc.call(protocol.ReqGetConsumerConnectionList, map[string]string{"consumerGroup": "pg"}, nil)
	expect(t, resp, protocol.RespSuccess, "")
	var cc struct {
		ConnectionSet []struct {
			ClientID string `json:"clientId"`
		} `json:"connectionSet"`
		ConsumeType string `json:"consumeType"`
	}
	if err := json.Unmarshal(resp.Body, &cc); err != nil || len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientID != "pop-client@1" || cc.ConsumeType != "CONSUME_POP" {
		t.Fatalf("consumers %s: %v", resp.Body, err)
	}
	cs := callDecode(rc, protocol.ReqGetConsumeStats, protocol.GetConsumeStatsRequestHeader{ConsumerGroup: "pg"}.Encode(), nil, protocol.DecodeConsumeStats)
	w := cs.OffsetTable[protocol.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}]
	if w.BrokerOffset != 3 || w.ConsumerOffset != 2 {
		t.Fatalf("progress %+v, want broker 3, consumer 2 (lag 1)", cs.OffsetTable)
	}
}
