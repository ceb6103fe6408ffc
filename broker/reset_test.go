package broker

import (
	"testing"

	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestResetOffsetThroughBroker(t *testing.T) {
	b, rc := withTopic(t, "R", 2)
	for range 5 {
		expect(t, rc.send("R", 0, "", "m"), protocol.RespSuccess, "")
	}
	reset := func(ts int64, force bool) *protocol.Command {
		return rc.call(protocol.ReqInvokeBrokerToResetOffset, protocol.ResetOffsetRequestHeader{
			Topic: "R", Group: "g", Timestamp: ts, IsForce: force, QueueID: -1, Offset: -1}.Encode(), nil)
	}
	// Nobody online: Java's CONSUMER_NOT_ONLINE, nothing changed.
	expect(t, reset(0, true), protocol.RespConsumerNotOnline, "not online")
	if _, ok := b.ConsumerOffset("g", "R", 0); ok {
		t.Fatal("offset committed although nobody was online")
	}

	expect(t, rc.heartbeat("c1", "g", protocol.BuildSubscriptionData("R", "*")), protocol.RespSuccess, "")
	expect(t, updateOffset(rc, "g", "R", 0, 5), protocol.RespSuccess, "")
	resp := reset(0, true) // to the earliest
	expect(t, resp, protocol.RespSuccess, "")
	body, err := protocol.DecodeResetOffsetBody(resp.Body)
	q0 := protocol.MessageQueue{Topic: "R", BrokerName: "broker-a", QueueID: 0}
	if err != nil || len(body.OffsetTable) != 2 || body.OffsetTable[q0] != 0 {
		t.Fatalf("reset body %+v %v", body, err)
	}
	if off, _ := b.ConsumerOffset("g", "R", 0); off != 0 {
		t.Fatalf("committed offset %d, want 0", off)
	}
	testwait.For(t, testwait.Default, "the consumer told", func() bool { return len(rc.resetRequests()) == 1 })
	push := rc.resetRequests()[0]
	if push.Ext("group") != "g" || push.Ext("topic") != "R" {
		t.Fatalf("push ext %v", push.ExtFields)
	}
	if pb, err := protocol.DecodeResetOffsetBody(push.Body); err != nil || pb.OffsetTable[q0] != 0 {
		t.Fatalf("push body %s: %v", push.Body, err)
	}
	// -1: to the max; without force an offset only moves back, so 0 stays.
	expect(t, reset(-1, false), protocol.RespSuccess, "")
	if off, _ := b.ConsumerOffset("g", "R", 0); off != 0 {
		t.Fatalf("unforced reset moved the offset forward to %d", off)
	}
	expect(t, reset(-1, true), protocol.RespSuccess, "")
	if off, _ := b.ConsumerOffset("g", "R", 0); off != 5 {
		t.Fatalf("forced reset to latest: %d, want 5", off)
	}
	expect(t, rc.call(protocol.ReqInvokeBrokerToResetOffset, protocol.ResetOffsetRequestHeader{
		Topic: "Nope", Group: "g", QueueID: -1, Offset: -1}.Encode(), nil), protocol.RespTopicNotExist, "")
}
