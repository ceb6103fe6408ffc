package remotingdoor

import (
	"context"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// handleGetBrokerConfig serves GET_BROKER_CONFIG (26): the configuration in
// force as RocketMQ properties text, under RocketMQ's key names.
func (d *Door) handleGetBrokerConfig(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	return success(req, nil, []byte(protocol.FormatProperties(d.proc.BrokerConfig())))
}

// handleUpdateBrokerConfig serves UPDATE_BROKER_CONFIG (25): the body is
// properties text; the process applies it (or refuses it whole).
func (d *Door) handleUpdateBrokerConfig(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	props, err := protocol.ParseProperties(string(req.Body))
	if err != nil {
		return errResponse(req, protocol.RespInvalidParameter, "updateBrokerConfig: %v", err)
	}
	return outcome(req, d.proc.UpdateBrokerConfig(props, c.RemoteAddr()))
}
