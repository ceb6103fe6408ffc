package broker

import (
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestViewAndQueryMessage(t *testing.T) {
	_, rc := withTopic(t, "Q", 1)
	h := sendHeader("Q", 0, map[string]string{"KEYS": "order-1 order-2", "UNIQ_KEY": "ABC123"})
	resp := rc.call(protocol.ReqSendMessage, h.Encode(), []byte("findme"))
	expect(t, resp, protocol.RespSuccess, "")
	_, phys, err := message.ParseOffsetMsgID(resp.Ext("msgId"))
	if err != nil {
		t.Fatal(err)
	}

	resp = rc.call(protocol.ReqViewMessageByID, protocol.ViewMessageRequestHeader{Offset: phys}.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	if msgs, err := message.DecodeMessages(resp.Body); err != nil || string(msgs[0].Body) != "findme" {
		t.Fatalf("view: %v", err)
	}
	expect(t, rc.call(protocol.ReqViewMessageByID, protocol.ViewMessageRequestHeader{Offset: phys + 1<<30}.Encode(), nil),
		protocol.RespSystemError, "can not find message")

	q := protocol.QueryMessageRequestHeader{Topic: "Q", Key: "order-2", MaxNum: 10, BeginTimestamp: 0, EndTimestamp: 1 << 62}
	resp = rc.call(protocol.ReqQueryMessage, q.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	if msgs, err := message.DecodeMessages(resp.Body); err != nil || len(msgs) != 1 || string(msgs[0].Body) != "findme" {
		t.Fatalf("query by key: %d %v", len(msgs), err)
	}
	q.Key = "ABC123"
	ext := q.Encode()
	ext["_UNIQUE_KEY_QUERY"] = "true"
	expect(t, rc.call(protocol.ReqQueryMessage, ext, nil), protocol.RespSuccess, "")
	q.Key = "nothing"
	expect(t, rc.call(protocol.ReqQueryMessage, q.Encode(), nil), protocol.RespQueryNotFound, "")
}

// TestQueryMessageTimeRange: QUERY_MESSAGE applies the request's store-time
// window [begin, end] to a unique-key query as to a key query (Java's
// QueryMessageProcessor passes it to the index for both), so a message
// queried outside its window is not found by either.
func TestQueryMessageTimeRange(t *testing.T) {
	clock := newFakeClock()
	_, rc := withTopicConfig(t, "Q", 1, func(c *config.Config) { c.Now = clock.Now })
	stored := clock.Now().UnixMilli()
	h := sendHeader("Q", 0, map[string]string{"KEYS": "order-7", "UNIQ_KEY": "UNIQ7"})
	expect(t, rc.call(protocol.ReqSendMessage, h.Encode(), []byte("in-window")), protocol.RespSuccess, "")
	clock.Advance(time.Hour)
	h = sendHeader("Q", 0, map[string]string{"KEYS": "order-8", "UNIQ_KEY": "UNIQ8"})
	expect(t, rc.call(protocol.ReqSendMessage, h.Encode(), []byte("later")), protocol.RespSuccess, "")

	query := func(key string, uniq bool, begin, end int64) *protocol.Command {
		ext := protocol.QueryMessageRequestHeader{Topic: "Q", Key: key, MaxNum: 32, BeginTimestamp: begin, EndTimestamp: end}.Encode()
		if uniq {
			ext["_UNIQUE_KEY_QUERY"] = "true"
		}
		return rc.call(protocol.ReqQueryMessage, ext, nil)
	}
	for _, tc := range []struct {
		name       string
		begin, end int64
		found      bool
	}{
		{"window around it", stored - 1000, stored + 1000, true},
		{"window of exactly its time", stored, stored, true},
		{"no upper bound", stored, 0, true},
		{"window after it", stored + 1, stored + 2*time.Hour.Milliseconds(), false},
		{"window before it", 0, stored - 1, false},
	} {
		for _, kind := range []struct {
			key  string
			uniq bool
		}{{"order-7", false}, {"UNIQ7", true}} {
			resp := query(kind.key, kind.uniq, tc.begin, tc.end)
			if !tc.found {
				if resp.Code != protocol.RespQueryNotFound {
					t.Errorf("%s, key %s (unique %v): code %d, want 22: the message is outside the window", tc.name, kind.key, kind.uniq, resp.Code)
				}
				continue
			}
			if resp.Code != protocol.RespSuccess {
				t.Errorf("%s, key %s (unique %v): code %d %q", tc.name, kind.key, kind.uniq, resp.Code, resp.Remark)
				continue
			}
			msgs, err := message.DecodeMessages(resp.Body)
			if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "in-window" {
				t.Errorf("%s, key %s (unique %v): %d messages (%v)", tc.name, kind.key, kind.uniq, len(msgs), err)
			}
		}
	}
	// The later message is found by its own unique key in its own window.
	if resp := query("UNIQ8", true, stored+1, 0); resp.Code != protocol.RespSuccess {
		t.Errorf("later message by unique key: code %d %q", resp.Code, resp.Remark)
	}
}
