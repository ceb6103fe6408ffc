package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// UpdateBrokerConfig changes n's configuration at run time
// (UPDATE_BROKER_CONFIG, mqadmin updateBrokerConfig): props go as
// properties text. The broker applies all of them or none; a Runnel broker
// refuses keys it cannot change while it runs, naming those it can.
func (a *Admin) UpdateBrokerConfig(ctx context.Context, n Node, props map[string]string) error {
	if len(props) == 0 {
		return fmt.Errorf("%w: no key to update", ErrBadArgument)
	}
	for k, v := range props {
		if k == "" || strings.ContainsAny(k, "=:\n#!") || strings.ContainsRune(v, '\n') {
			return fmt.Errorf("%w: broker config key %q=%q is not a properties line", ErrBadArgument, k, v)
		}
	}
	body := []byte(protocol.FormatProperties(props))
	_, err := a.callBrokerOK(ctx, "update broker config", n, protocol.NewRequest(protocol.ReqUpdateBrokerConfig, nil, body))
	return err
}

// UpdateGroup creates or changes a consumer group's config
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, mqadmin updateSubGroup) on every
// master of cluster (every cluster when ""), or on the brokers named. On
// each broker it reads the config in force there (Java's defaults for a
// group it does not know) and writes it back changed by modify, so fields
// modify leaves alone keep their values (mqadmin resets them to the
// defaults). It returns the brokers updated.
func (a *Admin) UpdateGroup(ctx context.Context, group, cluster string, brokers []string, modify func(*protocol.SubscriptionGroupConfig)) ([]Node, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("update group %q", group)
	var targets []Node
	var err error
	if len(brokers) > 0 {
		targets, err = a.BrokerNodes(ctx, brokers)
	} else {
		var info *protocol.ClusterInfo
		if info, err = a.ClusterInfo(ctx); err == nil {
			targets, err = masterRefs(info, cluster)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %w", op, err)
	}
	for i, n := range targets {
		g, _, err := a.GroupConfig(ctx, n, group)
		if err != nil {
			return targets[:i], err
		}
		modify(&g)
		g.GroupName = group
		body, err := json.Marshal(g)
		if err != nil {
			return targets[:i], err
		}
		req := protocol.NewRequest(protocol.ReqUpdateAndCreateSubscriptionGroup, nil, body)
		if _, err := a.callBrokerOK(ctx, op, n, req); err != nil {
			return targets[:i], err
		}
	}
	return targets, nil
}

// GroupConfig returns a group's config on broker n: the one it stores, or
// the defaults when the broker only knows the group (or not at all: found
// is then false).
func (a *Admin) GroupConfig(ctx context.Context, n Node, group string) (cfg protocol.SubscriptionGroupConfig, found bool, err error) {
	s, found, err := a.GroupSettings(ctx, n, group)
	return s.SubscriptionGroupConfig, found, err
}

// GroupSettings is a group's config with the RocketMQ 5 fields the shared
// config type does not keep, as a broker that has them reports them.
type GroupSettings struct {
	protocol.SubscriptionGroupConfig
	// ConsumeMessageOrderly is RocketMQ 5's FIFO switch of the group; nil
	// when the broker does not report one.
	ConsumeMessageOrderly *bool `json:"consumeMessageOrderly,omitempty"`
	// RetryPolicy is RocketMQ 5's groupRetryPolicy as the broker wrote it
	// ({"type":"EXPONENTIAL",...}); empty when it has none.
	RetryPolicy json.RawMessage `json:"groupRetryPolicy,omitempty"`
}

// GroupSettings returns a group's config on broker n
// (GET_ALL_SUBSCRIPTIONGROUP_CONFIG): the one it stores, or the defaults
// when it has none (found is then false).
func (a *Admin) GroupSettings(ctx context.Context, n Node, group string) (s GroupSettings, found bool, err error) {
	const op = "subscription group configs"
	s.SubscriptionGroupConfig = groupconf.New(group)
	resp, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil))
	if err != nil {
		return s, false, err
	}
	var w struct {
		SubscriptionGroupTable map[string]json.RawMessage `json:"subscriptionGroupTable"`
	}
	if err := protocol.UnmarshalLenient(resp.Body, &w); err != nil {
		return s, false, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	raw, ok := w.SubscriptionGroupTable[group]
	if !ok {
		return s, false, nil
	}
	if err := protocol.UnmarshalLenient(raw, &s.SubscriptionGroupConfig); err != nil {
		return s, false, fmt.Errorf("admin: %s: %s: group %s: %w: %v", op, n, group, protocol.ErrBadBody, err)
	}
	var extra struct {
		ConsumeMessageOrderly *bool           `json:"consumeMessageOrderly"`
		RetryPolicy           json.RawMessage `json:"groupRetryPolicy"`
	}
	if protocol.UnmarshalLenient(raw, &extra) == nil {
		s.ConsumeMessageOrderly, s.RetryPolicy = extra.ConsumeMessageOrderly, extra.RetryPolicy
	}
	return s, true, nil
}
