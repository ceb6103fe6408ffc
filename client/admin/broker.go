package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Broker-level questions mqadmin asks: brokerStatus
// (GET_BROKER_RUNTIME_INFO), getBrokerConfig (GET_BROKER_CONFIG),
// producerConnection (GET_PRODUCER_CONNECTION_LIST) and "who consumes this
// topic" (QUERY_TOPIC_CONSUME_BY_WHO).

// BrokerNodes resolves broker group names or host:port addresses to
// nodes; with none, every broker group's master (or first replica).
func (a *Admin) BrokerNodes(ctx context.Context, brokers []string) ([]Node, error) {
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	if len(brokers) > 0 {
		return resolveBrokers(info, brokers)
	}
	nodes := readRefs(info)
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: the name server knows no broker", ErrNoBroker)
	}
	return nodes, nil
}

// BrokerRuntimeInfo returns n's runtime figures (GET_BROKER_RUNTIME_INFO),
// a flat key/value table as mqadmin brokerStatus prints it.
func (a *Admin) BrokerRuntimeInfo(ctx context.Context, n Node) (map[string]string, error) {
	const op = "broker runtime info"
	resp, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqGetBrokerRuntimeInfo, nil, nil))
	if err != nil {
		return nil, err
	}
	var kv struct {
		Table map[string]string `json:"table"`
	}
	if err := protocol.UnmarshalLenient(resp.Body, &kv); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	if kv.Table == nil {
		kv.Table = map[string]string{}
	}
	return kv.Table, nil
}

// BrokerConfig returns n's configuration in force (GET_BROKER_CONFIG), the
// properties text under RocketMQ's key names, parsed.
func (a *Admin) BrokerConfig(ctx context.Context, n Node) (map[string]string, error) {
	const op = "broker config"
	resp, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqGetBrokerConfig, nil, nil))
	if err != nil {
		return nil, err
	}
	props, err := protocol.ParseProperties(string(resp.Body))
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	return props, nil
}

// ProducerClient is one connected producer of a group.
type ProducerClient struct {
	Group    string `json:"group,omitempty"` // set by AllProducers
	Broker   string `json:"brokerName"`
	ClientID string `json:"clientId"`
	Addr     string `json:"clientAddr"`
	Language string `json:"language"`
	Version  int    `json:"version"`
	Protocol string `json:"protocol"` // as ConsumerClient.Protocol
}

// protocolOf is a connection's protocol; a broker that does not say is
// a remoting one (Java's brokers only know remoting clients).
func protocolOf(c protocol.Connection) string {
	if c.Protocol == "" {
		return "remoting"
	}
	return c.Protocol
}

// ProducerConnections lists the producers of group connected to any
// broker (mqadmin producerConnection asks one broker; every broker is
// asked here, since a producer connects to the brokers it sends to).
// Sorted by broker and client id; none online fails with ErrNotOnline.
func (a *Admin) ProducerConnections(ctx context.Context, group string) ([]ProducerClient, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("producers of group %q", group)
	nodes, err := a.BrokerNodes(ctx, nil)
	if err != nil {
		return nil, err
	}
	req := protocol.NewRequest(protocol.ReqGetProducerConnectionList, map[string]string{"producerGroup": group}, nil)
	var out []ProducerClient
	for _, n := range nodes {
		resp, err := a.callBroker(ctx, op, n, req)
		if err != nil {
			return nil, err
		}
		if resp.Code != protocol.RespSuccess {
			continue // "the producer group[g] not exist" on this broker
		}
		var body struct {
			ConnectionSet []protocol.Connection `json:"connectionSet"`
		}
		if err := protocol.UnmarshalLenient(resp.Body, &body); err != nil {
			return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
		}
		for _, c := range body.ConnectionSet {
			out = append(out, ProducerClient{Broker: n.Name, ClientID: c.ClientID, Addr: c.ClientAddr, Language: c.Language, Version: c.Version, Protocol: protocolOf(c)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("admin: %s: %w: no broker has a producer of this group connected", op, ErrNotOnline)
	}
	slices.SortFunc(out, func(x, y ProducerClient) int {
		if c := strings.Compare(x.Broker, y.Broker); c != 0 {
			return c
		}
		return strings.Compare(x.ClientID, y.ClientID)
	})
	return out, nil
}

// TopicConsumers returns the consumer groups that subscribe to, or hold
// offsets on, topic on any broker of its route (QUERY_TOPIC_CONSUME_BY_WHO),
// sorted.
func (a *Admin) TopicConsumers(ctx context.Context, topic string) ([]string, error) {
	op := fmt.Sprintf("consumers of topic %q", topic)
	var out []string
	err := a.callTopicBrokers(ctx, op, protocol.ReqQueryTopicConsumeByWho, topic, func(n Node, resp *protocol.Command) error {
		var body struct {
			GroupList []string `json:"groupList"`
		}
		if err := protocol.UnmarshalLenient(resp.Body, &body); err != nil {
			return fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
		}
		out = append(out, body.GroupList...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
