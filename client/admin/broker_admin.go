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

// GroupSettings is a consumer group's config as a broker reports and
// takes it: the fields Runnel's brokers keep (groupconf.Config) and three
// of RocketMQ 5's that a Java broker keeps and Runnel's do not yet (they
// are sent, and read back as defaults): consumeMessageOrderly, the retry
// policy (Java's GroupRetryPolicy as JSON) and attribute changes in
// ParseAttributes' map form.
type GroupSettings struct {
	protocol.SubscriptionGroupConfig
	ConsumeMessageOrderly bool              `json:"consumeMessageOrderly"`
	GroupRetryPolicy      json.RawMessage   `json:"groupRetryPolicy,omitempty"`
	Attributes            map[string]string `json:"attributes,omitempty"`
}

// ParseRetryPolicy checks a group retry policy as mqadmin updateSubGroup -p
// takes it (Java's GroupRetryPolicy as JSON), e.g.
// {"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2}}
// or {"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}.
func ParseRetryPolicy(s string) (json.RawMessage, error) {
	var p struct {
		Type        *string         `json:"type"`
		Exponential json.RawMessage `json:"exponentialRetryPolicy"`
		Customized  json.RawMessage `json:"customizedRetryPolicy"`
	}
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("%w: retry policy %q is not a JSON object like {\"type\":\"EXPONENTIAL\",\"exponentialRetryPolicy\":{\"initial\":5000,\"max\":7200000,\"multiplier\":2}}: %v", ErrBadArgument, s, err)
	}
	if p.Type != nil && *p.Type != "CUSTOMIZED" && *p.Type != "EXPONENTIAL" {
		return nil, fmt.Errorf("%w: retry policy type %q: want CUSTOMIZED or EXPONENTIAL", ErrBadArgument, *p.Type)
	}
	return json.RawMessage(s), nil
}

// UpdateGroup creates or changes a consumer group's config
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, mqadmin updateSubGroup) on every
// master of cluster (every cluster when ""), or on the brokers named. On
// each broker it reads the config in force there (Java's defaults for a
// group it does not know) and writes it back changed by modify, so fields
// modify leaves alone keep their values (mqadmin resets them to the
// defaults). It returns the brokers updated.
func (a *Admin) UpdateGroup(ctx context.Context, group, cluster string, brokers []string, modify func(*protocol.SubscriptionGroupConfig)) ([]Node, error) {
	return a.UpdateGroupSettings(ctx, group, cluster, brokers, func(g *GroupSettings) { modify(&g.SubscriptionGroupConfig) })
}

// UpdateGroupSettings is UpdateGroup with RocketMQ 5's fields as well.
func (a *Admin) UpdateGroupSettings(ctx context.Context, group, cluster string, brokers []string, modify func(*GroupSettings)) ([]Node, error) {
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
		g, _, err := a.GroupSettingsOn(ctx, n, group)
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
	s, found, err := a.GroupSettingsOn(ctx, n, group)
	return s.SubscriptionGroupConfig, found, err
}

// GroupSettingsOn is GroupConfig with RocketMQ 5's fields as well (mqadmin
// getConsumerConfig).
func (a *Admin) GroupSettingsOn(ctx context.Context, n Node, group string) (cfg GroupSettings, found bool, err error) {
	const op = "subscription group configs"
	resp, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil))
	if err != nil {
		return cfg, false, err
	}
	var w struct {
		SubscriptionGroupTable map[string]json.RawMessage `json:"subscriptionGroupTable"`
	}
	if err := protocol.UnmarshalLenient(resp.Body, &w); err != nil {
		return cfg, false, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	raw, ok := w.SubscriptionGroupTable[group]
	cfg.SubscriptionGroupConfig = groupconf.New(group)
	if !ok {
		return cfg, false, nil
	}
	if err := protocol.UnmarshalLenient(raw, &cfg); err != nil {
		return cfg, false, fmt.Errorf("admin: %s: %s: group %s: %w: %v", op, n, group, protocol.ErrBadBody, err)
	}
	return cfg, true, nil
}
