package broker

import (
	"context"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleDeleteGroup serves DELETE_SUBSCRIPTIONGROUP (207).
func (b *Broker) handleDeleteGroup(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.DeleteSubscriptionGroupRequestHeader) *protocol.Command {
	return outcome(req, b.core.DeleteGroup(h.GroupName, h.CleanOffset))
}

// handleCloneGroupOffset serves CLONE_GROUP_OFFSET (314).
func (b *Broker) handleCloneGroupOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.CloneGroupOffsetRequestHeader) *protocol.Command {
	_, err := b.core.CloneGroupOffsets(h.SrcGroup, h.DestGroup, h.Topic, h.Offline)
	return outcome(req, err)
}
