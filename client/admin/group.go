package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// RetryGroupTopicPrefix starts the retry topic every clustering consumer
// group has (RocketMQ MixAll.RETRY_GROUP_TOPIC_PREFIX).
const RetryGroupTopicPrefix = "%RETRY%"

// Group is one consumer group.
type Group struct {
	Name string `json:"group"`
	// Brokers are the broker groups that hold its subscription config or
	// offsets; empty when it is only known by its %RETRY% topic.
	Brokers []string `json:"brokers"`
	// Consumers is the number of clients online in the group (as the first
	// broker asked sees them), or -1 when no broker could tell.
	Consumers int `json:"consumers"`
}

// ConsumerGroups lists the consumer groups of the cluster, sorted. Groups
// are gathered from every broker — GET_ALL_SUBSCRIPTIONGROUP_CONFIG, or
// GET_ALL_CONSUMER_OFFSET where that is not supported — and from the
// %RETRY%<group> topics the name server lists, so that a broker that
// answers neither still shows its clustering groups once they have
// consumed. Online consumers come from GET_CONSUMER_LIST_BY_GROUP.
func (a *Admin) ConsumerGroups(ctx context.Context) ([]Group, error) {
	const op = "consumer groups"
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	nodes := readRefs(info)
	seen := make(map[string]map[string]bool) // group -> broker names
	add := func(group, broker string) {
		if group == "" {
			return
		}
		if seen[group] == nil {
			seen[group] = make(map[string]bool)
		}
		if broker != "" {
			seen[group][broker] = true
		}
	}
	for _, n := range nodes {
		groups, err := a.brokerGroups(ctx, op, n)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			add(g, n.Name)
		}
	}
	topics, err := a.TopicList(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		if g, ok := strings.CutPrefix(t, RetryGroupTopicPrefix); ok {
			add(g, "")
		}
	}
	out := make([]Group, 0, len(seen))
	for name, brokers := range seen {
		g := Group{Name: name, Brokers: make([]string, 0, len(brokers)), Consumers: -1}
		for b := range brokers {
			g.Brokers = append(g.Brokers, b)
		}
		slices.Sort(g.Brokers)
		out = append(out, g)
	}
	slices.SortFunc(out, func(x, y Group) int { return cmp.Compare(x.Name, y.Name) })
	for i := range out {
		out[i].Consumers = a.onlineConsumers(ctx, out[i], nodes)
	}
	return out, nil
}

// readRefs returns a node to read from for every broker group, by name.
func readRefs(info *protocol.ClusterInfo) []Node {
	out := make([]Node, 0, len(info.BrokerAddrTable))
	for name, bd := range info.BrokerAddrTable {
		if addr := readAddr(bd); addr != "" {
			out = append(out, Node{Name: name, Addr: addr})
		}
	}
	slices.SortFunc(out, func(x, y Node) int { return cmp.Compare(x.Name, y.Name) })
	return out
}

// brokerGroups returns the groups broker n knows, by the first request it
// supports; none when it supports neither.
func (a *Admin) brokerGroups(ctx context.Context, op string, n Node) ([]string, error) {
	resp, err := a.callBroker(ctx, op, n, protocol.NewRequest(protocol.ReqGetAllSubscriptionGroupConfig, nil, nil))
	if err != nil {
		return nil, err
	}
	if resp.Code == protocol.RespSuccess {
		var w struct {
			SubscriptionGroupTable map[string]json.RawMessage `json:"subscriptionGroupTable"`
		}
		if err := protocol.UnmarshalLenient(resp.Body, &w); err != nil {
			return nil, fmt.Errorf("admin: %s: %s: GET_ALL_SUBSCRIPTIONGROUP_CONFIG: %w: %v", op, n, protocol.ErrBadBody, err)
		}
		return sortedKeys(w.SubscriptionGroupTable), nil
	}
	if resp.Code != protocol.RespRequestCodeNotSupported {
		return nil, responseError(op, n.String(), resp)
	}
	resp, err = a.callBroker(ctx, op, n, protocol.NewRequest(protocol.ReqGetAllConsumerOffset, nil, nil))
	if err != nil {
		return nil, err
	}
	if resp.Code == protocol.RespRequestCodeNotSupported {
		return nil, nil
	}
	if resp.Code != protocol.RespSuccess {
		return nil, responseError(op, n.String(), resp)
	}
	// ConsumerOffsetSerializeWrapper: {"offsetTable":{"topic@group":{0:12,...}}}
	var w struct {
		OffsetTable map[string]json.RawMessage `json:"offsetTable"`
	}
	if err := protocol.UnmarshalLenient(resp.Body, &w); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: GET_ALL_CONSUMER_OFFSET: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	var groups []string
	for key := range w.OffsetTable {
		if i := strings.LastIndexByte(key, '@'); i >= 0 {
			groups = append(groups, key[i+1:])
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// onlineConsumers asks one broker of g (or the first broker) for the
// group's client ids; -1 when it cannot tell. A broker answers a group
// without consumers with an error code (Java) or an empty list.
func (a *Admin) onlineConsumers(ctx context.Context, g Group, nodes []Node) int {
	var n Node
	for _, cand := range nodes {
		if len(g.Brokers) == 0 || cand.Name == g.Brokers[0] {
			n = cand
			break
		}
	}
	if n.Addr == "" {
		return -1
	}
	req := protocol.NewRequest(protocol.ReqGetConsumerListByGroup,
		protocol.GetConsumerListByGroupRequestHeader{ConsumerGroup: g.Name}.Encode(), nil)
	resp, err := a.callBroker(ctx, "consumers of group "+g.Name, n, req)
	if err != nil {
		return -1
	}
	if resp.Code != protocol.RespSuccess {
		if resp.Code == protocol.RespRequestCodeNotSupported {
			return -1
		}
		return 0
	}
	var body protocol.GetConsumerListByGroupResponseBody
	if err := body.Decode(resp.Body); err != nil {
		return -1
	}
	return len(body.ConsumerIDList)
}

// QueueProgress is one queue's consumption by a group (GET_CONSUME_STATS).
type QueueProgress struct {
	Topic          string `json:"topic"`
	Broker         string `json:"brokerName"`
	QueueID        int32  `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`   // the queue's max offset
	ConsumerOffset int64  `json:"consumerOffset"` // the group's committed offset
	Lag            int64  `json:"lag"`            // BrokerOffset - ConsumerOffset, never negative
	// LastTimestamp is the store time of the last consumed message, ms; 0
	// when unknown.
	LastTimestamp int64 `json:"lastTimestamp"`
}

// ConsumerProgress returns group's progress on every queue, sorted by
// topic, broker and queue: on topic's brokers when topic is set, else on
// every broker (each reports the topics the group has offsets for,
// including its %RETRY% topic). A group no broker reports anything for
// fails with an error matching ErrNotFound, as mqadmin consumerProgress.
func (a *Admin) ConsumerProgress(ctx context.Context, group, topic string) ([]QueueProgress, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("progress of group %q", group)
	var nodes []Node
	if topic != "" {
		var err error
		if nodes, err = a.routeNodes(ctx, topic); err != nil {
			return nil, err
		}
		op += fmt.Sprintf(" on topic %q", topic)
	} else {
		info, err := a.ClusterInfo(ctx)
		if err != nil {
			return nil, err
		}
		nodes = readRefs(info)
	}
	req := protocol.NewRequest(protocol.ReqGetConsumeStats,
		protocol.GetConsumeStatsRequestHeader{ConsumerGroup: group, Topic: topic}.Encode(), nil)
	var out []QueueProgress
	err := a.callEach(ctx, op, nodes, req, func(n Node, resp *protocol.Command) error {
		stats, err := protocol.DecodeConsumeStats(resp.Body)
		if err != nil {
			return fmt.Errorf("admin: %s: %s: %w", op, n, err)
		}
		for mq, w := range stats.OffsetTable {
			out = append(out, QueueProgress{Topic: mq.Topic, Broker: mq.BrokerName, QueueID: mq.QueueID,
				BrokerOffset: w.BrokerOffset, ConsumerOffset: w.ConsumerOffset,
				Lag: max(0, w.BrokerOffset-w.ConsumerOffset), LastTimestamp: w.LastTimestamp})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("admin: %s: %w: no broker reports offsets for it (it has not consumed yet, or the name is wrong)", op, ErrNotFound)
	}
	slices.SortFunc(out, func(x, y QueueProgress) int {
		return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Broker, y.Broker), cmp.Compare(x.QueueID, y.QueueID))
	})
	return out, nil
}

// TotalLag sums the lag of rows.
func TotalLag(rows []QueueProgress) int64 {
	var n int64
	for _, r := range rows {
		n += r.Lag
	}
	return n
}
