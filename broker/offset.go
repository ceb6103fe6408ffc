package broker

import (
	"context"

	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleQueryConsumerOffset serves QUERY_CONSUMER_OFFSET (14), as Java's
// ConsumerManageProcessor: the stored offset; else 0 when the queue still
// holds its first message (offset 0), so that a new group on a young broker
// reads from the start whatever its consume-from setting; else 22.
func (b *Broker) handleQueryConsumerOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.QueryConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	off, ok := b.offsets.Get(offsets.Key{Group: h.ConsumerGroup, Topic: h.Topic, QueueID: h.QueueID})
	if !ok {
		if b.st.MinOffset(h.Topic, h.QueueID) > 0 || b.st.MaxOffset(h.Topic, h.QueueID) == 0 {
			return errResponse(req, protocol.RespQueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
		}
		off = 0
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.QueryConsumerOffsetResponseHeader{Offset: off}.Encode()
	return resp
}

// handleUpdateConsumerOffset serves UPDATE_CONSUMER_OFFSET (15). The
// official client sends it oneway as it shuts down and closes the socket
// without reading; the transport dispatches every frame it received, and
// the offset is applied here before any reply is attempted. Negative
// offsets (the client's "unknown") are ignored.
func (b *Broker) handleUpdateConsumerOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.UpdateConsumerOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	b.offsets.Commit(offsets.Key{Group: h.ConsumerGroup, Topic: h.Topic, QueueID: h.QueueID}, h.CommitOffset)
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// handleGetMaxOffset serves GET_MAX_OFFSET (30): the offset the next
// message of the queue will get (0 for an unknown queue, as Java).
func (b *Broker) handleGetMaxOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetMaxOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.GetMaxOffsetResponseHeader{Offset: b.st.MaxOffset(h.Topic, h.QueueID)}.Encode()
	return resp
}

// handleGetMinOffset serves GET_MIN_OFFSET (31).
func (b *Broker) handleGetMinOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetMinOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.GetMinOffsetResponseHeader{Offset: b.st.MinOffset(h.Topic, h.QueueID)}.Encode()
	return resp
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP (29): the first
// offset stored at or after the timestamp.
func (b *Broker) handleSearchOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.SearchOffsetRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	off, err := b.st.OffsetByTime(h.Topic, h.QueueID, h.Timestamp)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "search offset: %v", err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.SearchOffsetResponseHeader{Offset: off}.Encode()
	return resp
}

// handleEarliestMsgStoreTime serves GET_EARLIEST_MSG_STORETIME (32): the
// store time of the queue's oldest message.
func (b *Broker) handleEarliestMsgStoreTime(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetEarliestMsgStoretimeRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	// An empty or unknown queue answers SUCCESS with -1, as Java's
	// MessageStore.getEarliestMessageTime does: callers compare the value,
	// they do not expect an error.
	ts := int64(-1)
	if e, err := b.st.QueueEntry(h.Topic, h.QueueID, b.st.MinOffset(h.Topic, h.QueueID)); err == nil {
		ts = e.StoreTimestamp
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.GetEarliestMsgStoretimeResponseHeader{Timestamp: ts}.Encode()
	return resp
}
