package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestRecallOverRemoting: a timer message's send is answered with a
// recallHandle (RocketMQ 5.3's SendMessageResponseHeader), and
// RECALL_MESSAGE with it withdraws the message before it falls due,
// answering its id; a message due beside it and one due after it are
// delivered. A handle that does not parse is refused ILLEGAL_OPERATION.
func TestRecallOverRemoting(t *testing.T) {
	b, rc := withTopic(t, "Recall", 1)
	due := time.Now().Add(1500 * time.Millisecond).UnixMilli()
	sendAt := func(body string, at int64) *protocol.Command {
		t.Helper()
		props := map[string]string{message.PropertyTimerDeliverMS: strconv.FormatInt(at, 10)}
		resp := rc.call(protocol.ReqSendMessage, sendHeader("Recall", 0, props).Encode(), []byte(body))
		expect(t, resp, protocol.RespSuccess, "")
		if resp.Ext("recallHandle") == "" {
			t.Fatalf("the send of a timer message was answered without a recallHandle: %v", resp.ExtFields)
		}
		return resp
	}
	gone := sendAt("gone", due)
	sendAt("kept", due)
	sendAt("last", due+300)

	expect(t, rc.call(protocol.ReqRecallMessage, map[string]string{"topic": "Recall", "recallHandle": "not-a-handle"}, nil),
		protocol.RespIllegalOperation, "recall failed")
	resp := rc.call(protocol.ReqRecallMessage, map[string]string{"producerGroup": "pg", "topic": "Recall",
		"recallHandle": gone.Ext("recallHandle")}, nil)
	expect(t, resp, protocol.RespSuccess, "")
	if id := resp.Ext("msgId"); id != gone.Ext("transactionId") {
		t.Fatalf("recall answered msgId %q, want the message's UNIQ_KEY %q", id, gone.Ext("transactionId"))
	}

	delivered := func() map[string]bool {
		out := map[string]bool{}
		res, err := b.Store().Get("Recall", 0, 0, 32, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := message.DecodeMessagesRaw(res.Messages)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out[string(m.Body)] = true
		}
		return out
	}
	testwait.For(t, 20*time.Second, "the last timer delivered", func() bool { return delivered()["last"] })
	if got := delivered(); len(got) != 2 || !got["kept"] {
		t.Fatalf("delivered %v, want kept and last (the timer delivers in due order: gone fell due before last)", got)
	}
}
