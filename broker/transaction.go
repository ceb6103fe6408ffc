package broker

import (
	"context"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleEndTransaction serves END_TRANSACTION (37), oneway from the
// official clients. A state left to the check gets no answer, as Java.
func (b *Broker) handleEndTransaction(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.EndTransactionRequestHeader) *protocol.Command {
	answered, err := b.core.EndTransaction(*h, c.RemoteAddr(), req.Remark)
	if !answered {
		return nil
	}
	return outcome(req, err)
}

// handleConsumerSendMsgBack serves CONSUMER_SEND_MSG_BACK (36).
func (b *Broker) handleConsumerSendMsgBack(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.ConsumerSendMsgBackRequestHeader) *protocol.Command {
	return outcome(req, b.core.SendBack(core.SendBackRequest{
		Group: h.Group, Offset: h.Offset, OriginMsgID: h.OriginMsgID, OriginTopic: h.OriginTopic,
		DelayLevel: h.DelayLevel, MaxReconsumeTimes: h.MaxReconsumeTimes, Client: c.RemoteAddr(),
	}))
}
