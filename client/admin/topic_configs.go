package admin

import (
	"context"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// TopicConfigs returns broker n's whole topic table (GET_ALL_TOPIC_CONFIG),
// by name: every topic's queues, permission, order flag and attributes in
// one request, where TopicRoute and TopicConfig cost one each. It is what
// a view of thousands of topics reads.
func (a *Admin) TopicConfigs(ctx context.Context, n Node) (map[string]protocol.TopicConfig, error) {
	const op = "all topic configs"
	resp, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqGetAllTopicConfig, nil, nil))
	if err != nil {
		return nil, err
	}
	var w protocol.TopicConfigSerializeWrapper // Java 5 adds mapping tables beside it
	if err := protocol.UnmarshalLenient(resp.Body, &w); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	if w.TopicConfigTable == nil {
		w.TopicConfigTable = map[string]protocol.TopicConfig{}
	}
	for name, tc := range w.TopicConfigTable {
		if tc.TopicName == "" {
			tc.TopicName = name
			w.TopicConfigTable[name] = tc
		}
	}
	return w.TopicConfigTable, nil
}
