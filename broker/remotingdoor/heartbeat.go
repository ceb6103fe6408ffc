package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleHeartbeat serves HEART_BEAT (34).
func (d *Door) handleHeartbeat(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	hb, err := protocol.DecodeHeartbeatData(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	meta := core.ClientMeta{Language: req.Language, Version: int(req.Version), Protocol: core.ProtocolRemoting}
	return outcome(req, d.core.Heartbeat(d.channel(c), meta, heartbeatOf(hb)))
}

// heartbeatOf is the core's heartbeat of a HEART_BEAT body.
func heartbeatOf(hb *protocol.HeartbeatData) core.Heartbeat {
	out := core.Heartbeat{ClientID: hb.ClientID, KeepSubscriptions: hb.WithoutSub}
	for _, pd := range hb.ProducerDataSet {
		out.Producers = append(out.Producers, pd.GroupName)
	}
	for _, cd := range hb.ConsumerDataSet {
		data := clients.ConsumerData{
			Group: cd.GroupName, ConsumeType: cd.ConsumeType, MessageModel: cd.MessageModel,
			ConsumeFromWhere: cd.ConsumeFromWhere,
		}
		for _, s := range cd.SubscriptionDataSet {
			data.Subscriptions = append(data.Subscriptions, clients.Subscription{
				Topic: s.Topic, Expression: s.SubString, ExpressionType: s.ExpressionType,
				Tags: s.TagsSet, Codes: s.CodeSet, Version: s.SubVersion,
			})
		}
		out.Consumers = append(out.Consumers, data)
	}
	return out
}

// handleUnregisterClient serves UNREGISTER_CLIENT (35), sent by Java
// clients as they shut down.
func (d *Door) handleUnregisterClient(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.UnregisterClientRequestHeader) *protocol.Command {
	d.core.UnregisterClient(d.channel(c), h.ClientID, h.ProducerGroup, h.ConsumerGroup)
	return success(req, nil, nil)
}

// handleGetConsumerList serves GET_CONSUMER_LIST_BY_GROUP (38).
func (d *Door) handleGetConsumerList(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetConsumerListByGroupRequestHeader) *protocol.Command {
	ids, err := d.core.ConsumerList(h.ConsumerGroup)
	return answerWith(req, nil, protocol.GetConsumerListByGroupResponseBody{ConsumerIDList: ids}.Encode(), err)
}

// handleLockBatch serves LOCK_BATCH_MQ (41): orderly consumers lock the
// queues they consume. The answer lists the queues the requester now
// holds; the official client reads only that body.
func (d *Door) handleLockBatch(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	locked := d.core.LockBatch(body.ConsumerGroup, body.ClientID, body.MQSet)
	return success(req, nil, protocol.LockBatchResponseBody{LockOKMQSet: locked}.Encode())
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ (42).
func (d *Door) handleUnlockBatch(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeLockBatchRequestBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	d.core.UnlockBatch(body.ConsumerGroup, body.ClientID, body.MQSet)
	return success(req, nil, nil)
}
