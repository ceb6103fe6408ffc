package remotingdoor

import (
	"context"
	"net/netip"
	"strings"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// maxPropertiesLen is the longest property string a stored message can
// carry (a 16-bit length in the record).
const maxPropertiesLen = 32767

// handleSend serves SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and
// SEND_BATCH_MESSAGE (320).
func (d *Door) handleSend(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	r, refused := d.decodeSend(c, req, nil)
	if refused != nil {
		return refused
	}
	res, err := d.core.Send(r)
	if err != nil {
		return failure(req, err)
	}
	return sendAnswer(req, res)
}

// sendCodes are the requests handleSend and handleSendRun serve.
var sendCodes = []int16{protocol.ReqSendMessage, protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage}

// handleSendRun serves a run of sends (remoting.RunHandler): the sends a
// connection delivered in one read, stored with one write
// (core.SendAll) and answered as handleSend answers each.
func (d *Door) handleSendRun(_ context.Context, c *remoting.Conn, reqs, resps []*protocol.Command) {
	rs := make([]core.SendRequest, 0, len(reqs))
	at := make([]int, 0, len(reqs)) // where each of rs is in reqs
	var strs protocol.Strings       // the run's sends share their group's and topic's strings
	for i, req := range reqs {
		r, refused := d.decodeSend(c, req, &strs)
		if refused != nil {
			resps[i] = refused
			continue
		}
		rs, at = append(rs, r), append(at, i)
	}
	if len(rs) == 0 {
		return
	}
	// The answers' fields share one array, sized for all of them: one
	// allocation a run, not one an answer.
	fields := make([]protocol.Field, 0, len(rs)*protocol.SendResponseFields)
	for k, o := range d.core.SendAll(rs) {
		req := reqs[at[k]]
		if o.Err != nil {
			resps[at[k]] = failure(req, o.Err)
			continue
		}
		n := len(fields)
		fields = sendAnswerFields(fields, o.Result)
		resps[at[k]] = successFields(req, fields[n:len(fields):len(fields)])
	}
}

// decodeSend is the core's request for a send, or the answer refusing it;
// strs, if set, makes the header's strings (protocol.Strings).
func (d *Door) decodeSend(c *remoting.Conn, req *protocol.Command, strs *protocol.Strings) (core.SendRequest, *protocol.Command) {
	h, err := protocol.DecodeSendMessageCommandWith(req, strs)
	if err != nil {
		return core.SendRequest{}, errResponse(req, protocol.RespSystemError, "%v", err)
	}
	r, refused := sendRequestOf(c, req, &h)
	if refused != nil {
		return r, refused
	}
	if r.Batch {
		// A batch is checked whole, before it is decoded into memory, as
		// Java's store checks a MessageExtBatch's body (checkMessages):
		// each body alone under maxMessageSize is not enough.
		if limit := d.core.Runtime().MaxMessageSize; len(req.Body) > limit {
			return r, errResponse(req, protocol.RespMessageIllegal,
				"the message is illegal, maybe msg body or properties length not matched. msg body length limit %dB, msg properties length limit 32KiB. (a batch of %d bytes)", limit, len(req.Body))
		}
		inner, err := protocol.DecodeBatch(req.Body)
		if err != nil {
			return r, errResponse(req, protocol.RespMessageIllegal, "%v", err)
		}
		r.Messages = make([]core.SendMessage, len(inner))
		for i, m := range inner {
			r.Messages[i] = core.SendMessage{Flag: m.Flag, Properties: m.Properties, Body: m.Body}
		}
	}
	return r, nil
}

// sendAnswer is the success answer to a send.
func sendAnswer(req *protocol.Command, res core.SendResult) *protocol.Command {
	return successFields(req, sendAnswerFields(nil, res))
}

// sendAnswerFields appends the header fields of a send's success answer to
// dst.
func sendAnswerFields(dst []protocol.Field, res core.SendResult) []protocol.Field {
	out := protocol.SendMessageResponseHeader{
		MsgID:         strings.Join(res.MsgIDs, ","),
		QueueID:       res.QueueID,
		QueueOffset:   res.QueueOffset,
		MsgRegion:     res.Region,
		TraceOn:       "true",
		TransactionID: res.TransactionID,
		RecallHandle:  res.RecallHandle,
	}
	return out.Append(dst)
}

// sendRequestOf is the core's request for a decoded send header: a batch's
// Messages are left to the caller, a single message is the request's
// body. A property string too long for a stored record is refused.
func sendRequestOf(c *remoting.Conn, req *protocol.Command, h *protocol.SendMessageRequestHeader) (core.SendRequest, *protocol.Command) {
	if len(h.Properties) > maxPropertiesLen {
		return core.SendRequest{}, errResponse(req, protocol.RespMessageIllegal,
			"the message is illegal, maybe msg properties length limit 32KiB (got %d bytes).", len(h.Properties))
	}
	r := core.SendRequest{
		ProducerGroup:         h.ProducerGroup,
		Topic:                 h.Topic,
		DefaultTopic:          h.DefaultTopic,
		DefaultTopicQueueNums: h.DefaultTopicQueueNums,
		QueueID:               h.QueueID,
		SysFlag:               h.SysFlag,
		BornTimestamp:         h.BornTimestamp,
		ReconsumeTimes:        h.ReconsumeTimes,
		MaxReconsumeTimes:     h.MaxReconsumeTimes,
		Batch:                 req.Code == protocol.ReqSendBatchMessage,
		BornHost:              parseAddrPort(c.RemoteAddr()),
		Client:                c.RemoteAddr(),
	}
	if !r.Batch {
		r.Messages = []core.SendMessage{{Flag: h.Flag, Properties: message.UnmarshalProperties(h.Properties), Body: req.Body}}
	}
	return r, nil
}

// parseAddrPort parses a connection's remote address; an unparsable one
// (never expected from TCP) becomes the zero address.
func parseAddrPort(s string) netip.AddrPort {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
