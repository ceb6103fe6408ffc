package broker

import (
	"context"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleHeartbeat serves HEART_BEAT (34).
func (b *Broker) handleHeartbeat(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	hb, err := protocol.DecodeHeartbeatData(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	meta := core.ClientMeta{Language: req.Language, Version: int(req.Version)}
	return outcome(req, b.core.Heartbeat(b.channel(c), meta, *hb))
}

// handleUnregisterClient serves UNREGISTER_CLIENT (35), sent by Java
// clients as they shut down.
func (b *Broker) handleUnregisterClient(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.UnregisterClientRequestHeader) *protocol.Command {
	b.core.UnregisterClient(b.channel(c), h.ClientID, h.ProducerGroup, h.ConsumerGroup)
	return success(req, nil, nil)
}

// handleGetConsumerList serves GET_CONSUMER_LIST_BY_GROUP (38).
func (b *Broker) handleGetConsumerList(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetConsumerListByGroupRequestHeader) *protocol.Command {
	ids, err := b.core.ConsumerList(h.ConsumerGroup)
	if err != nil {
		return failure(req, err)
	}
	return success(req, nil, protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: ids}.Encode())
}

// handleLockBatch serves LOCK_BATCH_MQ (41): orderly consumers lock the
// queues they consume. The answer lists the queues the requester now
// holds; the official client reads only that body.
func (b *Broker) handleLockBatch(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	locked := b.core.LockBatch(body.ConsumerGroup, body.ClientID, body.MQSet)
	return success(req, nil, protocol.LockBatchResponseBody{LockOKMQSet: locked}.Encode())
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ (42).
func (b *Broker) handleUnlockBatch(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	b.core.UnlockBatch(body.ConsumerGroup, body.ClientID, body.MQSet)
	return success(req, nil, nil)
}
