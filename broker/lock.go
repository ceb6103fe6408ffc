package broker

import (
	"context"

	"github.com/runnelmq/runnel/broker/lock"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleLockBatch serves LOCK_BATCH_MQ (41): orderly consumers lock the
// queues they consume. The answer lists the queues the requester now holds;
// the official client reads only that body.
func (b *Broker) handleLockBatch(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	locked := b.locks.TryLockBatch(body.ConsumerGroup, toLockQueues(body.MQSet), body.ClientID)
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = protocol.LockBatchResponseBody{LockOKMQSet: fromLockQueues(locked)}.Encode()
	return resp
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ (42): a client releases its own
// locks; other clients' locks are left alone.
func (b *Broker) handleUnlockBatch(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	b.locks.UnlockBatch(body.ConsumerGroup, toLockQueues(body.MQSet), body.ClientID)
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

func toLockQueues(mqs []protocol.MessageQueue) []lock.Queue {
	out := make([]lock.Queue, len(mqs))
	for i, q := range mqs {
		out[i] = lock.Queue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: q.QueueID}
	}
	return out
}

func fromLockQueues(qs []lock.Queue) []protocol.MessageQueue {
	out := make([]protocol.MessageQueue, len(qs))
	for i, q := range qs {
		out[i] = protocol.MessageQueue{Topic: q.Topic, BrokerName: q.BrokerName, QueueID: q.QueueID}
	}
	return out
}
