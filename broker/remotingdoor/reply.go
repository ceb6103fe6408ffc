package remotingdoor

import (
	"context"
	"strconv"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleSendReply serves SEND_REPLY_MESSAGE (324) and _V2 (325): a
// consumer's reply to a request, pushed by the core to the requester. The
// replier is answered once the push is (the handler returns nil).
func (d *Door) handleSendReply(ctx context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	h, err := protocol.DecodeSendMessageCommand(req)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	r, refused := sendRequestOf(c, req, &h)
	if refused != nil {
		return refused
	}
	later := c.Defer(ctx, req)
	d.core.Reply(r, func(res core.SendResult, err error) {
		if err != nil {
			_ = later.Respond(failure(req, err))
			return
		}
		out := protocol.SendMessageResponseHeader{
			MsgID:       res.MsgIDs[0],
			QueueID:     res.QueueID,
			QueueOffset: res.QueueOffset,
			MsgRegion:   res.Region,
			TraceOn:     "true",
		}
		_ = later.Respond(successFields(req, out.Append(nil)))
	})
	return nil
}

// pushReplyHeader is Java's ReplyMessageRequestHeader. Hosts are
// host:port, which Java's and Go's clients both read.
func pushReplyHeader(p core.PushedReply) map[string]string {
	r, m := p.Request, p.Message
	return map[string]string{
		"producerGroup":         r.ProducerGroup,
		"topic":                 r.Topic,
		"defaultTopic":          r.DefaultTopic,
		"defaultTopicQueueNums": strconv.Itoa(int(r.DefaultTopicQueueNums)),
		"queueId":               strconv.Itoa(int(r.QueueID)),
		"sysFlag":               strconv.Itoa(int(r.SysFlag)),
		"bornTimestamp":         strconv.FormatInt(r.BornTimestamp, 10),
		"flag":                  strconv.Itoa(int(m.Flag)),
		"properties":            message.MarshalProperties(m.Properties),
		"reconsumeTimes":        strconv.Itoa(int(r.ReconsumeTimes)),
		"unitMode":              "false",
		"bornHost":              r.BornHost.String(),
		"storeHost":             p.StoreHost.String(),
		"storeTimestamp":        strconv.FormatInt(p.StoreTimestamp, 10),
	}
}
