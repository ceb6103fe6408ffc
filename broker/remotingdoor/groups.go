package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleUpdateGroup serves UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200,
// mqadmin updateSubGroup): the body is a SubscriptionGroupConfig in JSON,
// read over Java's defaults so a field left out keeps its default. A body
// that is not one is INVALID_PARAMETER (Java throws a SYSTEM_ERROR from its
// JSON parser; the remark here names the problem).
func (d *Door) handleUpdateGroup(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	if len(req.Body) == 0 {
		return errResponse(req, protocol.RespInvalidParameter, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: no SubscriptionGroupConfig in the body")
	}
	g := groupconf.New("")
	if err := protocol.UnmarshalLenient(req.Body, &g); err != nil {
		return errResponse(req, protocol.RespInvalidParameter, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: the body is not a SubscriptionGroupConfig: %v", err)
	}
	return outcome(req, d.core.UpdateGroup(g, c.RemoteAddr()))
}

// handleGetAllSubscriptionGroups serves GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201) (Java SubscriptionGroupWrapper): the configured groups, and every
// other group the broker knows with the defaults.
func (d *Door) handleGetAllSubscriptionGroups(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	table, version := d.core.GroupConfigs()
	return jsonResponse(req, protocol.SubscriptionGroupWrapper{SubscriptionGroupTable: table, DataVersion: version})
}

// handleDeleteGroup serves DELETE_SUBSCRIPTIONGROUP (207).
func (d *Door) handleDeleteGroup(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.DeleteSubscriptionGroupRequestHeader) *protocol.Command {
	return outcome(req, d.core.DeleteGroup(h.GroupName, h.CleanOffset))
}

// handleCloneGroupOffset serves CLONE_GROUP_OFFSET (314).
func (d *Door) handleCloneGroupOffset(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.CloneGroupOffsetRequestHeader) *protocol.Command {
	_, err := d.core.CloneGroupOffsets(h.SrcGroup, h.DestGroup, h.Topic, h.Offline)
	return outcome(req, err)
}
