package remotingdoor

import (
	"context"
	"encoding/json"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Admin requests the broker answers by asking a connected consumer: the
// core calls the client through its Channel and the admin's connection
// gets the client's answer as its own, later (the handler returns nil).

// consumerReply answers the admin's req with the client's reply, or with
// the refusal.
func consumerReply(req *protocol.Command, r core.ClientReply, err error) *protocol.Command {
	if err != nil {
		return failure(req, err)
	}
	out := protocol.NewResponse(req, int16(r.Status), r.Remark)
	out.ExtFields, out.Body = r.Ext, r.Body
	return out
}

// handleConsumerRunningInfo serves GET_CONSUMER_RUNNING_INFO (307) from an
// admin.
func (d *Door) handleConsumerRunningInfo(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.GetConsumerRunningInfoRequestHeader) *protocol.Command {
	later := c.Defer(ctx, req)
	d.core.ConsumerRunningInfo(h.ConsumerGroup, h.ClientID, h.JstackEnable, func(r core.ClientReply, err error) {
		_ = later.Respond(consumerReply(req, r, err))
	})
	return nil
}

// handleConsumeMessageDirectly serves CONSUME_MESSAGE_DIRECTLY (309) from
// an admin (consumerGroup, clientId, msgId — an offsetMsgId — and
// optionally topic).
func (d *Door) handleConsumeMessageDirectly(ctx context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	later := c.Defer(ctx, req)
	r := core.DirectConsume{Group: req.Ext("consumerGroup"), ClientID: req.Ext("clientId"), MsgID: req.Ext("msgId"), Topic: req.Ext("topic")}
	d.core.ConsumeMessageDirectly(r, func(r core.ClientReply, err error) {
		_ = later.Respond(consumerReply(req, r, err))
	})
	return nil
}

// handleGetConsumerStatus serves INVOKE_BROKER_TO_GET_CONSUMER_STATUS
// (223): the answer is a GetConsumerStatusBody,
// {"messageQueueTable":{},"consumerTable":{<clientId>:{<mq>:offset}}}.
func (d *Door) handleGetConsumerStatus(ctx context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	later := c.Defer(ctx, req)
	d.core.ConsumerStatus(req.Ext("topic"), req.Ext("group"), req.Ext("clientAddr"), func(tables map[string][]byte, err error) {
		if err != nil {
			_ = later.Respond(failure(req, err))
			return
		}
		_ = later.Respond(success(req, nil, consumerStatusBody(tables)))
	})
	return nil
}

// consumerStatusBody writes the body; tables are spliced in raw, since the
// clients write them in fastjson's object-key form, which Java's tools
// read.
func consumerStatusBody(tables map[string][]byte) []byte {
	body := []byte(`{"messageQueueTable":{},"consumerTable":{`)
	for i, id := range core.SortedClientIDs(tables) {
		if i > 0 {
			body = append(body, ',')
		}
		q, _ := json.Marshal(id)
		body = append(body, q...)
		body = append(body, ':')
		body = append(body, tables[id]...)
	}
	return append(body, "}}"...)
}
