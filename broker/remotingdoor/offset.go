package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleQueryConsumerOffset serves QUERY_CONSUMER_OFFSET (14).
func (d *Door) handleQueryConsumerOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.QueryConsumerOffsetRequestHeader) *protocol.Command {
	off, err := d.core.QueryConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID)
	return answerWith(req, protocol.QueryConsumerOffsetResponseHeader{Offset: off}.Encode(), nil, err)
}

// handleUpdateConsumerOffset serves UPDATE_CONSUMER_OFFSET (15). The
// official client sends it oneway as it shuts down and closes the socket
// without reading; the transport dispatches every frame it received, and
// the offset is applied here before any reply is attempted.
func (d *Door) handleUpdateConsumerOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.UpdateConsumerOffsetRequestHeader) *protocol.Command {
	d.core.CommitConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	return success(req, nil, nil)
}

// handleGetMaxOffset serves GET_MAX_OFFSET (30).
func (d *Door) handleGetMaxOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetMaxOffsetRequestHeader) *protocol.Command {
	return success(req, protocol.GetMaxOffsetResponseHeader{Offset: d.core.MaxOffset(h.Topic, h.QueueID)}.Encode(), nil)
}

// handleGetMinOffset serves GET_MIN_OFFSET (31).
func (d *Door) handleGetMinOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetMinOffsetRequestHeader) *protocol.Command {
	return success(req, protocol.GetMinOffsetResponseHeader{Offset: d.core.MinOffset(h.Topic, h.QueueID)}.Encode(), nil)
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP (29).
func (d *Door) handleSearchOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.SearchOffsetRequestHeader) *protocol.Command {
	off, err := d.core.SearchOffset(h.Topic, h.QueueID, h.Timestamp)
	return answerWith(req, protocol.SearchOffsetResponseHeader{Offset: off}.Encode(), nil, err)
}

// handleEarliestMsgStoreTime serves GET_EARLIEST_MSG_STORETIME (32).
func (d *Door) handleEarliestMsgStoreTime(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetEarliestMsgStoretimeRequestHeader) *protocol.Command {
	ts := d.core.EarliestStoreTime(h.Topic, h.QueueID)
	return success(req, protocol.GetEarliestMsgStoretimeResponseHeader{Timestamp: ts}.Encode(), nil)
}

// handleResetOffset serves INVOKE_BROKER_TO_RESET_OFFSET (222): the answer
// carries the new offset table.
func (d *Door) handleResetOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ResetOffsetRequestHeader) *protocol.Command {
	table, err := d.core.ResetOffset(core.ResetRequest{
		Group: h.Group, Topic: h.Topic, QueueID: h.QueueID, Offset: h.Offset, Timestamp: h.Timestamp, Force: h.IsForce,
	})
	if err != nil {
		return failure(req, err)
	}
	return success(req, nil, protocol.ResetOffsetBody{OffsetTable: table}.Encode())
}
