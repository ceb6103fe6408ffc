package admin

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// NamesrvState is one name server's answer to GET_BROKER_CLUSTER_INFO.
type NamesrvState struct {
	Addr string `json:"addr"`
	// Brokers is how many broker nodes it knows.
	Brokers int `json:"brokers"`
	// Err is why it did not answer (a *CallError or *ResponseError).
	Err error `json:"-"`
}

// NamesrvStates asks every configured name server, in order, for the
// cluster it knows: which answer, and how many broker nodes each lists.
func (a *Admin) NamesrvStates(ctx context.Context) []NamesrvState {
	const op = "cluster info"
	out := make([]NamesrvState, 0, len(a.cfg.NamesrvAddrs))
	for _, addr := range a.cfg.NamesrvAddrs {
		st := NamesrvState{Addr: addr}
		cctx, cancel := a.withTimeout(ctx)
		resp, err := a.rc.Invoke(cctx, addr, protocol.NewRequest(protocol.ReqGetBrokerClusterInfo, nil, nil))
		cancel()
		node := "name server " + addr
		switch {
		case err != nil:
			st.Err = &CallError{Op: op, Node: node, Addr: addr, Err: err}
		case resp.Code != protocol.RespSuccess:
			st.Err = responseError(op, node, resp)
		default:
			info, derr := protocol.DecodeClusterInfo(resp.Body)
			if derr != nil {
				st.Err = fmt.Errorf("admin: %s: %s: %w", op, node, derr)
				break
			}
			for _, bd := range info.BrokerAddrTable {
				st.Brokers += len(bd.BrokerAddrs)
			}
		}
		out = append(out, st)
	}
	return out
}
