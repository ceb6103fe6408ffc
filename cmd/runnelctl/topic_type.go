package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// A topic's RocketMQ 5 message type (its message.type attribute) is in
// each broker's topic config, not in the name server's route: runnelctl
// asks the masters serving the topic.

// typeChange is --type's attribute change, checked against the types
// RocketMQ knows.
func typeChange(t string) (map[string]string, error) {
	mt, ok := topicconf.ParseMessageType(strings.ToUpper(t))
	if !ok {
		return nil, fmt.Errorf("--type %q: want one of %v", t, topicconf.MessageTypes)
	}
	return map[string]string{"+" + topicconf.AttributeMessageType: string(mt)}, nil
}

// brokerType is a topic's message type on the master of one broker group
// of route, "-" when that master cannot say.
func brokerType(ctx context.Context, adm *admin.Admin, route *protocol.TopicRouteData, brokerName, topic string) string {
	for _, bd := range route.BrokerDatas {
		if bd.BrokerName != brokerName || bd.MasterAddr() == "" {
			continue
		}
		tc, err := adm.TopicConfig(ctx, admin.Node{Name: brokerName, Addr: bd.MasterAddr()}, topic)
		if err != nil {
			return "-"
		}
		return string(tc.MessageType())
	}
	return "-"
}

// topicType is a topic's message type across the broker groups serving
// it: one type, or each group's, comma-separated, when they differ.
func topicType(ctx context.Context, adm *admin.Admin, topic string) string {
	route, err := adm.TopicRoute(ctx, topic)
	if err != nil {
		return "-"
	}
	var types []string
	for _, qd := range route.QueueDatas {
		if t := brokerType(ctx, adm, route, qd.BrokerName, topic); !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	if len(types) == 0 {
		return "-"
	}
	return strings.Join(types, ",")
}

// printTopicTypes prints topics with their message types.
func printTopicTypes(ctx context.Context, a *app, adm *admin.Admin, topics []string) error {
	type row struct {
		Topic string `json:"topic"`
		Type  string `json:"type"`
	}
	rows := make([]row, 0, len(topics))
	for _, t := range topics {
		rows = append(rows, row{Topic: t, Type: topicType(ctx, adm, t)})
	}
	if a.output == "json" {
		return writeJSON(a.stdout, rows)
	}
	tb := newTable(a.stdout, "TOPIC", "TYPE")
	for _, r := range rows {
		tb.row(r.Topic, r.Type)
	}
	return tb.flush()
}
