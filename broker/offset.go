package broker

import (
	"context"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleQueryConsumerOffset serves QUERY_CONSUMER_OFFSET (14).
func (b *Broker) handleQueryConsumerOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.QueryConsumerOffsetRequestHeader) *protocol.Command {
	off, err := b.core.QueryConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID)
	if err != nil {
		return failure(req, err)
	}
	return success(req, protocol.QueryConsumerOffsetResponseHeader{Offset: off}.Encode(), nil)
}

// handleUpdateConsumerOffset serves UPDATE_CONSUMER_OFFSET (15). The
// official client sends it oneway as it shuts down and closes the socket
// without reading; the transport dispatches every frame it received, and
// the offset is applied here before any reply is attempted.
func (b *Broker) handleUpdateConsumerOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.UpdateConsumerOffsetRequestHeader) *protocol.Command {
	b.core.CommitConsumerOffset(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	return success(req, nil, nil)
}

// handleGetMaxOffset serves GET_MAX_OFFSET (30).
func (b *Broker) handleGetMaxOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetMaxOffsetRequestHeader) *protocol.Command {
	return success(req, protocol.GetMaxOffsetResponseHeader{Offset: b.core.MaxOffset(h.Topic, h.QueueID)}.Encode(), nil)
}

// handleGetMinOffset serves GET_MIN_OFFSET (31).
func (b *Broker) handleGetMinOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetMinOffsetRequestHeader) *protocol.Command {
	return success(req, protocol.GetMinOffsetResponseHeader{Offset: b.core.MinOffset(h.Topic, h.QueueID)}.Encode(), nil)
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP (29).
func (b *Broker) handleSearchOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.SearchOffsetRequestHeader) *protocol.Command {
	off, err := b.core.SearchOffset(h.Topic, h.QueueID, h.Timestamp)
	if err != nil {
		return failure(req, err)
	}
	return success(req, protocol.SearchOffsetResponseHeader{Offset: off}.Encode(), nil)
}

// handleEarliestMsgStoreTime serves GET_EARLIEST_MSG_STORETIME (32).
func (b *Broker) handleEarliestMsgStoreTime(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.GetEarliestMsgStoretimeRequestHeader) *protocol.Command {
	ts := b.core.EarliestStoreTime(h.Topic, h.QueueID)
	return success(req, protocol.GetEarliestMsgStoretimeResponseHeader{Timestamp: ts}.Encode(), nil)
}

// handleResetOffset serves INVOKE_BROKER_TO_RESET_OFFSET (222): the answer
// carries the new offset table.
func (b *Broker) handleResetOffset(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ResetOffsetRequestHeader) *protocol.Command {
	table, err := b.core.ResetOffset(core.ResetRequest{
		Group: h.Group, Topic: h.Topic, QueueID: h.QueueID, Offset: h.Offset, Timestamp: h.Timestamp, Force: h.IsForce,
	})
	if err != nil {
		return failure(req, err)
	}
	return success(req, nil, protocol.ResetOffsetBody{OffsetTable: table}.Encode())
}
