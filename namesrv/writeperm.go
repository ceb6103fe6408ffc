package namesrv

import (
	"context"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// writePermOfBroker serves WIPE_WRITE_PERM_OF_BROKER (mqadmin
// wipeWritePerm) and ADD_WRITE_PERM_OF_BROKER (addWritePerm): the named
// broker group's topics lose or regain write permission in the routes
// this name server hands out. The answer says how many topics changed
// (wipeTopicCount / addTopicCount), as Java's does; an unknown group is
// not an error, it changes 0 topics.
func (s *Server) writePermOfBroker(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.WritePermOfBrokerRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return s.badRequest(c, req, err)
	}
	var n int
	if req.Code == protocol.ReqAddWritePermOfBroker {
		n = s.table.AddWritePerm(h.BrokerName)
	} else {
		n = s.table.WipeWritePerm(h.BrokerName)
	}
	s.log.Info("write permission of broker changed", "op", protocol.RequestCodeName(req.Code),
		"broker", h.BrokerName, "topics", n, "remote", c.RemoteAddr())
	resp := success(req)
	resp.ExtFields = protocol.WritePermOfBrokerResponseHeader{TopicCount: int32(n)}.Encode(req.Code)
	return resp
}
