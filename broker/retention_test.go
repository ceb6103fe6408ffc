package broker

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// TestOffsetsAfterRetention: once retention has deleted a queue's oldest
// messages, the offset requests answer from what is left, as Java's do
// after its commit log files expire: GET_MIN_OFFSET and a pull's minOffset
// move past the deleted messages, a pull below them is moved there,
// GET_EARLIEST_MSG_STORETIME is the oldest survivor's, a timestamp before
// it searches to the new minimum, and a new group's offset query no longer
// starts it at 0.
func TestOffsetsAfterRetention(t *testing.T) {
	clock := newFakeClock()
	b := startBroker(t, func(c *config.Config) {
		c.Now = clock.Now
		c.FileReservedTime = 72 * time.Hour
		prev := c.StoreOptions
		c.StoreOptions = func(o *store.Options) {
			prev(o)
			o.RetentionInterval = -1 // retention runs below, as of the fake clock
		}
	})
	rc := newRawClient(t, b.Addr())
	rc.createTopic("R", 1)
	for i := range 3 {
		expect(t, rc.send("R", 0, "", string(rune('a'+i))), protocol.RespSuccess, "")
	}
	clock.Advance(time.Hour)
	survivorsStored := clock.Now().UnixMilli()
	for i := range 2 {
		expect(t, rc.send("R", 0, "", string(rune('x'+i))), protocol.RespSuccess, "")
	}
	// 72 h after the survivors were stored, the first three are 73 h old.
	if n, err := b.Store().Retain(clock.Now().Add(72 * time.Hour)); err != nil || n == 0 {
		t.Fatalf("retention deleted %d bytes, err %v", n, err)
	}

	q := protocol.QueueRequestHeader{Topic: "R", QueueID: 0}
	var minh protocol.GetMinOffsetResponseHeader
	resp := rc.call(protocol.ReqGetMinOffset, protocol.GetMinOffsetRequestHeader{QueueRequestHeader: q}.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	if err := minh.Decode(resp.ExtFields); err != nil || minh.Offset != 3 {
		t.Fatalf("GET_MIN_OFFSET %d (%v), want 3 after retention deleted offsets 0-2", minh.Offset, err)
	}
	var maxh protocol.GetMaxOffsetResponseHeader
	resp = rc.call(protocol.ReqGetMaxOffset, protocol.GetMaxOffsetRequestHeader{QueueRequestHeader: q}.Encode(), nil)
	if err := maxh.Decode(resp.ExtFields); err != nil || maxh.Offset != 5 {
		t.Fatalf("GET_MAX_OFFSET %d (%v), want 5", maxh.Offset, err)
	}
	var eh protocol.GetEarliestMsgStoretimeResponseHeader
	resp = rc.call(protocol.ReqGetEarliestMsgStoreTime, protocol.GetEarliestMsgStoretimeRequestHeader{QueueRequestHeader: q}.Encode(), nil)
	if err := eh.Decode(resp.ExtFields); err != nil || eh.Timestamp != survivorsStored {
		t.Fatalf("GET_EARLIEST_MSG_STORETIME %d (%v), want the survivors' %d", eh.Timestamp, err, survivorsStored)
	}
	var sh protocol.SearchOffsetResponseHeader
	resp = rc.call(protocol.ReqSearchOffsetByTimestamp, protocol.SearchOffsetRequestHeader{Topic: "R", QueueID: 0, Timestamp: 1}.Encode(), nil)
	if err := sh.Decode(resp.ExtFields); err != nil || sh.Offset != 3 {
		t.Fatalf("SEARCH_OFFSET_BY_TIMESTAMP before every message: %d (%v), want the new minimum 3", sh.Offset, err)
	}

	h := pullHeader("g", "R", 0, 0, 32, protocol.PullFlagSubscription)
	h.Subscription = "*"
	resp = rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	expect(t, resp, protocol.RespPullOffsetMoved, "")
	if ph := decodePullHeader(t, resp); ph.NextBeginOffset != 3 || ph.MinOffset != 3 || ph.MaxOffset != 5 {
		t.Fatalf("pull at a deleted offset: %+v, want nextBeginOffset 3, min 3, max 5", ph)
	}
	h.QueueOffset = 3
	resp = rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	if msgs, err := message.DecodeMessages(resp.Body); err != nil || len(msgs) != 2 || string(msgs[0].Body) != "x" {
		t.Fatalf("pull from the new minimum: %d messages (%v)", len(msgs), err)
	}

	// The queue no longer holds offset 0, so a group without an offset is
	// told so (22) instead of being started at 0.
	resp, _ = queryOffset(rc, "fresh", "R", 0)
	expect(t, resp, protocol.RespQueryNotFound, "")
}
