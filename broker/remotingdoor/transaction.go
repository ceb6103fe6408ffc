package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleEndTransaction serves END_TRANSACTION (37), oneway from the
// official clients. A state left to the check gets no answer, as Java.
func (d *Door) handleEndTransaction(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.EndTransactionRequestHeader) *protocol.Command {
	end := transaction.EndRequest{
		ProducerGroup: h.ProducerGroup, QueueOffset: h.TranStateTableOffset, CommitLogOffset: h.CommitLogOffset,
		FromCheck: h.FromTransactionCheck, MsgID: h.MsgID, TransactionID: h.TransactionID,
	}
	switch h.CommitOrRollback {
	case protocol.TransactionCommit:
		end.Resolution = transaction.Commit
	case protocol.TransactionRollback:
		end.Resolution = transaction.Rollback
	}
	answered, err := d.core.EndTransaction(end, c.RemoteAddr(), req.Remark)
	if !answered {
		return nil
	}
	return outcome(req, err)
}

// handleConsumerSendMsgBack serves CONSUMER_SEND_MSG_BACK (36).
func (d *Door) handleConsumerSendMsgBack(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.ConsumerSendMsgBackRequestHeader) *protocol.Command {
	return outcome(req, d.core.SendBack(core.SendBackRequest{
		Group: h.Group, Offset: h.Offset, OriginMsgID: h.OriginMsgID, OriginTopic: h.OriginTopic,
		DelayLevel: h.DelayLevel, MaxReconsumeTimes: h.MaxReconsumeTimes, Client: c.RemoteAddr(),
	}))
}
