package admin

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// NamesrvTopics is one name server's answer to a write-permission change:
// how many of the broker group's topics it changed.
type NamesrvTopics struct {
	Namesrv string `json:"namesrv"`
	Topics  int    `json:"topics"`
}

// WipeWritePerm takes write permission from broker group brokerName's
// topics on every name server (WIPE_WRITE_PERM_OF_BROKER, mqadmin
// wipeWritePerm), so producers stop sending there and consumers go on
// reading; the broker itself is not told. It lasts until AddWritePerm, or
// until the broker registers a changed topic table.
func (a *Admin) WipeWritePerm(ctx context.Context, brokerName string) ([]NamesrvTopics, error) {
	return a.writePerm(ctx, protocol.ReqWipeWritePermOfBroker, "wipe write permission", brokerName)
}

// AddWritePerm gives broker group brokerName's topics read and write
// permission on every name server (ADD_WRITE_PERM_OF_BROKER, mqadmin
// addWritePerm).
func (a *Admin) AddWritePerm(ctx context.Context, brokerName string) ([]NamesrvTopics, error) {
	return a.writePerm(ctx, protocol.ReqAddWritePermOfBroker, "add write permission", brokerName)
}

// writePerm sends code to every name server in turn (each holds its own
// route table) and stops at the first failure, returning the answers
// before it.
func (a *Admin) writePerm(ctx context.Context, code int16, what, brokerName string) ([]NamesrvTopics, error) {
	if err := checkName("broker name", brokerName); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("%s of broker %q", what, brokerName)
	req := protocol.NewRequest(code, protocol.WritePermOfBrokerRequestHeader{BrokerName: brokerName}.Encode(), nil)
	var out []NamesrvTopics
	for _, addr := range a.cfg.NamesrvAddrs {
		cctx, cancel := a.withTimeout(ctx)
		resp, err := a.rc.Invoke(cctx, addr, req)
		cancel()
		node := "name server " + addr
		if err != nil {
			return out, &CallError{Op: op, Node: node, Addr: addr, Err: err}
		}
		if resp.Code != protocol.RespSuccess {
			return out, responseError(op, node, resp)
		}
		var h protocol.WritePermOfBrokerResponseHeader
		if err := h.Decode(code, resp.ExtFields); err != nil {
			return out, fmt.Errorf("admin: %s: %s: %w", op, node, err)
		}
		out = append(out, NamesrvTopics{Namesrv: addr, Topics: int(h.TopicCount)})
	}
	return out, nil
}
