package broker

import (
	"context"

	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleResetOffset serves INVOKE_BROKER_TO_RESET_OFFSET (222) (Java
// Broker2Client.resetOffset): for each queue of the topic, the offset of
// the first message stored at or after the timestamp (-1: the max offset);
// without isForce an offset only moves back. The group's online consumers
// are sent RESET_CONSUMER_CLIENT_OFFSET (220) with the table, and the
// answer carries it too. Unlike Java, the broker also commits the new
// offsets itself, so the reset holds even if a client misses the message.
// With no consumer online the answer is CONSUMER_NOT_ONLINE and nothing
// changes, as in Java (tools then commit offsets directly).
func (b *Broker) handleResetOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.ResetOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		return errResponse(req, protocol.RespTopicNotExist, "topic[%s] not exist", h.Topic)
	}
	table := map[protocol.MessageQueue]int64{}
	for q := range int32(tc.ReadQueueNums) {
		if h.QueueID >= 0 && q != h.QueueID {
			continue
		}
		var target int64
		switch {
		case h.QueueID >= 0 && h.Offset >= 0:
			target = h.Offset
		case h.Timestamp == -1:
			target = b.st.MaxOffset(h.Topic, q)
		default:
			off, err := b.st.OffsetByTime(h.Topic, q, h.Timestamp)
			if err != nil {
				return errResponse(req, protocol.RespSystemError, "search offset of %s queue %d: %v", h.Topic, q, err)
			}
			target = off
		}
		if !h.IsForce {
			if cur, ok := b.offsets.Get(offsets.Key{Group: h.Group, Topic: h.Topic, QueueID: q}); ok && cur < target {
				target = cur
			}
		}
		table[protocol.MessageQueue{Topic: h.Topic, BrokerName: b.cfg.BrokerName, QueueID: q}] = target
	}
	chans := b.clients.Channels(h.Group)
	if len(chans) == 0 {
		return errResponse(req, protocol.RespConsumerNotOnline,
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", h.Group, h.Topic, h.Timestamp)
	}
	for mq, off := range table {
		b.offsets.Commit(offsets.Key{Group: h.Group, Topic: mq.Topic, QueueID: mq.QueueID}, off)
	}
	body := protocol.ResetOffsetBody{OffsetTable: table}.Encode()
	ext := map[string]string{"topic": h.Topic, "group": h.Group, "timestamp": itoa(h.Timestamp)}
	for _, ch := range chans {
		if conn, ok := ch.Conn.(*remoting.Conn); ok {
			push := protocol.NewRequest(protocol.ReqResetConsumerClientOffset, ext, body)
			b.send(conn, func() error { return conn.InvokeOneway(push) })
		}
	}
	b.log.Info("broker: consumer offsets reset", "group", h.Group, "topic", h.Topic, "timestamp", h.Timestamp, "consumers", len(chans))
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
}
