package broker

import (
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestViewAndQueryMessage(t *testing.T) {
	b := startBroker(t, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("Q", 1)
	h := sendHeader("Q", 0, map[string]string{"KEYS": "order-1 order-2", "UNIQ_KEY": "ABC123"})
	resp := rc.call(protocol.ReqSendMessage, h.Encode(), []byte("findme"))
	expect(t, resp, protocol.RespSuccess, "")
	_, phys, err := protocol.ParseOffsetMsgID(resp.Ext("msgId"))
	if err != nil {
		t.Fatal(err)
	}

	resp = rc.call(protocol.ReqViewMessageByID, protocol.ViewMessageRequestHeader{Offset: phys}.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	if msgs, err := protocol.DecodeMessages(resp.Body); err != nil || string(msgs[0].Body) != "findme" {
		t.Fatalf("view: %v", err)
	}
	expect(t, rc.call(protocol.ReqViewMessageByID, protocol.ViewMessageRequestHeader{Offset: phys + 1<<30}.Encode(), nil),
		protocol.RespSystemError, "can not find message")

	q := protocol.QueryMessageRequestHeader{Topic: "Q", Key: "order-2", MaxNum: 10, BeginTimestamp: 0, EndTimestamp: 1 << 62}
	resp = rc.call(protocol.ReqQueryMessage, q.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	if msgs, err := protocol.DecodeMessages(resp.Body); err != nil || len(msgs) != 1 || string(msgs[0].Body) != "findme" {
		t.Fatalf("query by key: %d %v", len(msgs), err)
	}
	q.Key = "ABC123"
	ext := q.Encode()
	ext["_UNIQUE_KEY_QUERY"] = "true"
	expect(t, rc.call(protocol.ReqQueryMessage, ext, nil), protocol.RespSuccess, "")
	q.Key = "nothing"
	expect(t, rc.call(protocol.ReqQueryMessage, q.Encode(), nil), protocol.RespQueryNotFound, "")
}
