package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// AllProducers lists every producer connected to any broker, by group
// (GET_ALL_PRODUCER_INFO, RocketMQ 5's ProducerTableInfo), sorted by group,
// broker and client id. Brokers that do not serve the request are skipped;
// when none does, the error matches ErrUnsupported (then
// ProducerConnections asks for one group by name).
func (a *Admin) AllProducers(ctx context.Context) ([]ProducerClient, error) {
	const op = "all producers"
	nodes, err := a.BrokerNodes(ctx, nil)
	if err != nil {
		return nil, err
	}
	req := protocol.NewRequest(protocol.ReqGetAllProducerInfo, nil, nil)
	var out []ProducerClient
	var unsupported error
	served := 0
	for _, n := range nodes {
		resp, err := a.callBroker(ctx, op, n, req)
		if err != nil {
			return nil, err
		}
		if resp.Code == protocol.RespRequestCodeNotSupported {
			unsupported = responseError(op, n.String(), resp)
			continue
		}
		if resp.Code != protocol.RespSuccess {
			return nil, responseError(op, n.String(), resp)
		}
		served++
		var body struct {
			Data map[string][]struct {
				ClientID string `json:"clientId"`
				RemoteIP string `json:"remoteIP"`
				Language string `json:"language"`
				Version  int    `json:"version"`
			} `json:"data"`
		}
		if err := protocol.UnmarshalLenient(resp.Body, &body); err != nil {
			return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
		}
		for g, clients := range body.Data {
			for _, c := range clients {
				out = append(out, ProducerClient{Group: g, Broker: n.Name, ClientID: c.ClientID, Addr: c.RemoteIP, Language: c.Language, Version: c.Version})
			}
		}
	}
	if served == 0 && unsupported != nil {
		return nil, unsupported // a *ResponseError matching ErrUnsupported
	}
	slices.SortFunc(out, func(x, y ProducerClient) int {
		return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Broker, y.Broker), cmp.Compare(x.ClientID, y.ClientID))
	})
	return out, nil
}
