package broker

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Sends a connection delivers together (a burst written at once, as the
// many senders of one client deliver them) are stored with one store write
// and each is answered as if it came alone: a refused one with its own
// code, the rest where they went. Bursts are written until one is read
// whole (the kernel decides how a burst is read; nearly always at once).
func TestSendsReadTogetherShareOneWrite(t *testing.T) {
	b, _ := withTopicConfig(t, "Run", 4, func(c *config.Config) { c.MaxMessageSize = 2048 })
	nc, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const n = 16
	const bad, tooBig = 5, 9
	for burst := 0; burst < 30; burst++ {
		var buf []byte
		for i := range n {
			q := int32(i % 4)
			if i == bad {
				q = 7 // Run has 4 queues
			}
			body := []byte(fmt.Sprintf("burst %d message %d", burst, i))
			if i == tooBig {
				body = make([]byte, 4096)
			}
			code := protocol.ReqSendMessageV2
			ext := sendHeader("Run", q, map[string]string{protocol.PropertyKeys: fmt.Sprint("k", i)}).EncodeV2()
			if i%3 == 0 {
				code, ext = protocol.ReqSendMessage, sendHeader("Run", q, nil).Encode() // the official client's form
			}
			req := protocol.NewRequest(code, ext, body)
			req.Opaque = int32(burst*1000 + i)
			f, err := protocol.EncodeFrame(req)
			if err != nil {
				t.Fatal(err)
			}
			buf = append(buf, f...)
		}
		syncs := b.Store().Stats().Syncs
		if _, err := nc.Write(buf); err != nil {
			t.Fatal(err)
		}
		for range n {
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			f, err := protocol.ReadFrame(nc, protocol.MaxFrameSize)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := protocol.DecodeFrame(f)
			if err != nil {
				t.Fatal(err)
			}
			i := int(resp.Opaque) - burst*1000
			switch i {
			case bad:
				expect(t, resp, protocol.RespSystemError, "queueId[7] is illegal")
				continue
			case tooBig:
				expect(t, resp, protocol.RespMessageIllegal, "msg body length limit 2048B")
				continue
			}
			expect(t, resp, protocol.RespSuccess, "")
			var h protocol.SendMessageResponseHeader
			if err := h.Decode(resp.Fields()); err != nil {
				t.Fatal(err)
			}
			if h.QueueID != int32(i%4) {
				t.Fatalf("message %d went to queue %d", i, h.QueueID)
			}
			g, err := b.Store().Get("Run", h.QueueID, h.QueueOffset, 1, 1<<20, nil)
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := message.DecodeMessages(g.Messages)
			g.Recycle()
			if err != nil || len(msgs) != 1 || string(msgs[0].Body) != fmt.Sprintf("burst %d message %d", burst, i) || msgs[0].OffsetMsgID != h.MsgID {
				t.Fatalf("message %d at %d/%d: %v %v", i, h.QueueID, h.QueueOffset, msgs, err)
			}
		}
		if got := b.Store().Stats().Syncs - syncs; got <= 2 {
			return // n-2 accepted sends, one write (and room for a background one)
		}
	}
	t.Fatal("no burst of sends was stored with one write")
}
