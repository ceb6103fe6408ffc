package client

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// registerHandlers installs the answers to broker-to-client requests.
func (in *instance) registerHandlers() {
	in.rc.Handle(protocol.ReqNotifyConsumerIDsChanged, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		// Oneway from the broker: rebalance everything now, as the official
		// clients do; the group in the header is only informative.
		in.log.Debug("client: consumer ids changed", "group", req.Ext("consumerGroup"))
		in.triggerRebalance()
		return nil
	})
	in.rc.Handle(protocol.ReqGetConsumerRunningInfo, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h protocol.GetConsumerRunningInfoRequestHeader
		if err := h.Decode(req.ExtFields); err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		if h.ClientID != in.clientID {
			return protocol.NewResponse(req, protocol.RespSystemError, "Can't find specified client instance "+h.ClientID)
		}
		c := in.consumer(h.ConsumerGroup)
		if c == nil {
			return protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("The Consumer Group <%s> not exist in this consumer", h.ConsumerGroup))
		}
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = c.runningInfo()
		return resp
	})
	in.rc.Handle(protocol.ReqConsumeMessageDirectly, func(ctx context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		group, id := req.Ext("consumerGroup"), req.Ext("clientId")
		if id != in.clientID {
			return protocol.NewResponse(req, protocol.RespSystemError, "Can't find specified client instance of: "+id)
		}
		c := in.consumer(group)
		if c == nil {
			return protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("The Consumer Group <%s> not exist in this consumer", group))
		}
		msgs, err := message.DecodeMessages(req.Body)
		if err != nil || len(msgs) != 1 {
			return protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("client: consume directly: body holds %d messages: %v", len(msgs), err))
		}
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = c.consumeDirectly(ctx, msgs[0], req.Ext("brokerName"))
		return resp
	})
	in.rc.Handle(protocol.ReqGetConsumerStatusFromClient, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		c := in.consumer(req.Ext("group"))
		if c == nil {
			return protocol.NewResponse(req, protocol.RespSystemError, "client: no consumer of group "+req.Ext("group"))
		}
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = c.consumerStatus(req.Ext("topic"))
		return resp
	})
	in.rc.Handle(protocol.ReqCheckTransactionState, in.handleCheckTransaction)
	in.rc.Handle(protocol.ReqPushReplyMessageToClient, in.handlePushReply)
	in.rc.Handle(protocol.ReqResetConsumerClientOffset, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h protocol.ResetOffsetRequestHeader
		if err := h.Decode(req.ExtFields); err != nil {
			in.log.Warn("client: bad reset offset request", "err", err)
			return nil
		}
		table, err := decodeOffsetTable(req.Body)
		if err != nil {
			in.log.Warn("client: bad reset offset body", "group", h.Group, "err", err)
			return nil
		}
		c := in.consumer(h.Group)
		if c == nil {
			return nil
		}
		// Reset on the instance's own life, not the request's: the
		// connection may close while the queues are being re-created.
		in.spawn(func() { c.resetOffsets(in.life, h.Topic, table) })
		return nil
	})
}

// decodeOffsetTable parses a ResetOffsetBody (protocol owns its forms).
func decodeOffsetTable(body []byte) (map[queue.MessageQueue]int64, error) {
	rb, err := protocol.DecodeResetOffsetBody(body)
	if err != nil {
		return nil, fmt.Errorf("client: reset offset body: %w", err)
	}
	return rb.OffsetTable, nil
}
