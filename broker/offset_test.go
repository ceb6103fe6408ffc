package broker

import (
	"net"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/testwait"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func queryOffset(rc *rawClient, group, topic string, q int32) (*protocol.Command, int64) {
	resp := rc.call(protocol.ReqQueryConsumerOffset, protocol.QueryConsumerOffsetRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: q}.Encode(), nil)
	var h protocol.QueryConsumerOffsetResponseHeader
	_ = h.Decode(resp.ExtFields)
	return resp, h.Offset
}

func updateOffset(rc *rawClient, group, topic string, q int32, off int64) *protocol.Command {
	return rc.call(protocol.ReqUpdateConsumerOffset, protocol.UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: q, CommitOffset: off}.Encode(), nil)
}

func TestConsumerOffsets(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerAt(t, dir, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("O", 2)

	// Nothing stored, empty queue: 22.
	resp, _ := queryOffset(rc, "g", "O", 0)
	expect(t, resp, protocol.RespQueryNotFound, "")
	// Young broker: the queue still holds offset 0, so a new group starts there.
	expect(t, rc.send("O", 0, "", "x"), protocol.RespSuccess, "")
	resp, off := queryOffset(rc, "g", "O", 0)
	expect(t, resp, protocol.RespSuccess, "")
	if off != 0 {
		t.Fatalf("young-broker offset %d, want 0", off)
	}
	expect(t, updateOffset(rc, "g", "O", 0, 1), protocol.RespSuccess, "")
	expect(t, updateOffset(rc, "g", "O", 0, -1), protocol.RespSuccess, "") // ignored
	if resp, off = queryOffset(rc, "g", "O", 0); off != 1 {
		t.Fatalf("offset %d after update, want 1 (negative ignored)", off)
	}
	expect(t, updateOffset(rc, "g", "O", 1, 0), protocol.RespSuccess, "")

	// Max, min, search and earliest store time.
	var mh protocol.GetMaxOffsetResponseHeader
	resp = rc.call(protocol.ReqGetMaxOffset, protocol.GetMaxOffsetRequestHeader{QueueRequestHeader: protocol.QueueRequestHeader{Topic: "O", QueueID: 0}}.Encode(), nil)
	if err := mh.Decode(resp.ExtFields); err != nil || mh.Offset != 1 {
		t.Fatalf("max offset %d %v", mh.Offset, err)
	}
	resp = rc.call(protocol.ReqGetMinOffset, protocol.GetMinOffsetRequestHeader{QueueRequestHeader: protocol.QueueRequestHeader{Topic: "O", QueueID: 0}}.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	var minh protocol.GetMinOffsetResponseHeader
	if err := minh.Decode(resp.ExtFields); err != nil || minh.Offset != 0 {
		t.Fatalf("min offset %d %v, want 0", minh.Offset, err)
	}
	var sh protocol.SearchOffsetResponseHeader
	resp = rc.call(protocol.ReqSearchOffsetByTimestamp, protocol.SearchOffsetRequestHeader{Topic: "O", QueueID: 0, Timestamp: 1}.Encode(), nil)
	if err := sh.Decode(resp.ExtFields); err != nil || sh.Offset != 0 {
		t.Fatalf("search offset %d %v", sh.Offset, err)
	}
	resp = rc.call(protocol.ReqGetEarliestMsgStoreTime, protocol.GetEarliestMsgStoretimeRequestHeader{QueueRequestHeader: protocol.QueueRequestHeader{Topic: "O", QueueID: 0}}.Encode(), nil)
	var eh protocol.GetEarliestMsgStoretimeResponseHeader
	if err := eh.Decode(resp.ExtFields); err != nil || eh.Timestamp <= 0 {
		t.Fatalf("earliest store time %d %v", eh.Timestamp, err)
	}
	for _, q := range []protocol.QueueRequestHeader{{Topic: "O", QueueID: 1}, {Topic: "Unknown", QueueID: 0}} {
		resp = rc.call(protocol.ReqGetEarliestMsgStoreTime, protocol.GetEarliestMsgStoretimeRequestHeader{QueueRequestHeader: q}.Encode(), nil)
		expect(t, resp, protocol.RespSuccess, "")
		eh = protocol.GetEarliestMsgStoretimeResponseHeader{}
		if err := eh.Decode(resp.ExtFields); err != nil || eh.Timestamp != -1 {
			t.Fatalf("earliest store time of empty %+v: %d %v, want -1", q, eh.Timestamp, err)
		}
	}

	// Offsets survive a clean restart.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2 := startBrokerAt(t, dir, nil)
	rc2 := newRawClient(t, b2.Addr())
	if resp, off = queryOffset(rc2, "g", "O", 0); resp.Code != protocol.RespSuccess || off != 1 {
		t.Fatalf("after restart: code %d offset %d, want 1", resp.Code, off)
	}
	if resp, off = queryOffset(rc2, "g", "O", 1); resp.Code != protocol.RespSuccess || off != 0 {
		t.Fatalf("after restart: queue 1 code %d offset %d, want 0", resp.Code, off)
	}
}

func TestAbortLosesUnpersistedOffsets(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerAt(t, dir, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("A", 1)
	expect(t, updateOffset(rc, "g", "A", 0, 3), protocol.RespSuccess, "")
	if err := b.core.PersistOffsets(); err != nil {
		t.Fatal(err)
	}
	expect(t, updateOffset(rc, "g", "A", 0, 9), protocol.RespSuccess, "")
	if err := b.Abort(); err != nil {
		t.Fatal(err)
	}
	b2, err := New(testConfig(t, dir)) // not started: the offsets are loaded by New
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if off, _ := b2.ConsumerOffset("g", "A", 0); off != 3 {
		t.Fatalf("offset after abort %d, want the persisted 3", off)
	}
}

func TestOffsetsPersistPeriodically(t *testing.T) {
	b, rc := withTopicConfig(t, "PP", 1, func(c *config.Config) { c.OffsetPersistInterval = 20 * time.Millisecond })
	expect(t, updateOffset(rc, "g", "PP", 0, 11), protocol.RespSuccess, "")
	testwait.For(t, testwait.Default, "the offset in the store", func() bool {
		off, ok, err := b.Store().ConsumerOffset("g", "PP", 0)
		return err == nil && ok && off == 11
	})
}

func TestSendMessageV2(t *testing.T) {
	_, rc := withTopic(t, "V2", 1)
	h := sendHeader("V2", 0, map[string]string{"TAGS": "x"})
	resp := rc.call(protocol.ReqSendMessageV2, h.EncodeV2(), []byte("java style"))
	expect(t, resp, protocol.RespSuccess, "")
	if resp.Ext("queueOffset") != "0" || resp.Ext("msgId") == "" {
		t.Fatalf("response ext %v", resp.ExtFields)
	}
}

// TestOffsetUpdateBeforeReset: the official client sends its last
// UPDATE_CONSUMER_OFFSET frames and closes the socket without reading the
// replies (a reset when unread data is pending). The broker must apply
// them all the same.
func TestOffsetUpdateBeforeReset(t *testing.T) {
	b, _ := withTopic(t, "RST", 4)
	nc, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var frames []byte
	for q := range int32(4) {
		req := protocol.NewRequest(protocol.ReqUpdateConsumerOffset, protocol.UpdateConsumerOffsetRequestHeader{
			ConsumerGroup: "g", Topic: "RST", QueueID: q, CommitOffset: int64(100 + q)}.Encode(), nil)
		f, err := protocol.EncodeFrame(req)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f...)
	}
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	_ = nc.(*net.TCPConn).SetLinger(0) // close with RST, as an abrupt client does
	_ = nc.Close()
	testwait.For(t, testwait.Default, "all four offsets applied", func() bool {
		for q := range int32(4) {
			if off, ok := b.ConsumerOffset("g", "RST", q); !ok || off != int64(100+q) {
				return false
			}
		}
		return true
	})
}
