package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// maxTopicLen is RocketMQ's topic length rule (TopicValidator); the
// alphabet is topicconf.ValidName.

const maxTopicLen = 127

func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %s is empty", ErrBadArgument, what)
	case len(name) > maxTopicLen:
		return fmt.Errorf("%w: %s %q is longer than %d characters", ErrBadArgument, what, name, maxTopicLen)
	case !topicconf.ValidName(name):
		return fmt.Errorf("%w: %s %q has characters outside [%%|a-zA-Z0-9_-]", ErrBadArgument, what, name)
	}
	return nil
}

// TopicList lists every topic the name server knows
// (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), sorted. It includes system topics
// and the %RETRY% topics of consumer groups.
func (a *Admin) TopicList(ctx context.Context) ([]string, error) {
	const op = "topic list"
	resp, err := a.callNamesrv(ctx, op, protocol.NewRequest(protocol.ReqGetAllTopicListFromNameServer, nil, nil))
	if err != nil {
		return nil, err
	}
	var list protocol.TopicList
	if err := protocol.UnmarshalLenient(resp.Body, &list); err != nil {
		return nil, fmt.Errorf("admin: %s: %w: %v", op, protocol.ErrBadBody, err)
	}
	slices.Sort(list.TopicList)
	return slices.Compact(list.TopicList), nil
}

// TopicRoute asks for a topic's route (GET_ROUTEINFO_BY_TOPIC). A topic the
// name server does not know fails with an error matching ErrNotFound.
func (a *Admin) TopicRoute(ctx context.Context, topic string) (*protocol.TopicRouteData, error) {
	if err := checkName("topic", topic); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("route of topic %q", topic)
	req := protocol.NewRequest(protocol.ReqGetRouteInfoByTopic,
		protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}.Encode(), nil)
	return namesrvBody(ctx, a, op, req, protocol.DecodeTopicRouteData)
}

// TopicSpec describes a topic to create or update. A zero field keeps what
// a broker already has for an existing topic, and takes the default for a
// new one: updating "orders" with only Perm set leaves its queue counts
// alone.
type TopicSpec struct {
	// Topic is the name. Required.
	Topic string
	// Cluster creates the topic on every master of this cluster. When both
	// Cluster and Brokers are empty and the name server knows exactly one
	// cluster, that one is used.
	Cluster string
	// Brokers creates the topic on these broker groups (by name) or nodes
	// (host:port) instead.
	Brokers []string
	// ReadQueueNums and WriteQueueNums are the queue counts on each broker.
	// Default: kept on an existing topic, 8 each on a new one (mqadmin
	// updateTopic's default).
	ReadQueueNums  int
	WriteQueueNums int
	// Perm is the permission bits (protocol.PermRead|PermWrite...). Default:
	// kept, or read and write (6) on a new topic.
	Perm int
	// Order marks the topic as ordered in the brokers' topic config.
	// Default: kept, or false on a new topic.
	Order *bool
	// Attributes are RocketMQ 5 attribute changes in ParseAttributes' form
	// ("+message.type" -> "FIFO", "-key" -> ""), checked with
	// CheckTopicAttributes and sent in the header's attributes field as
	// Java's admin sends them. Default none. Runnel's brokers accept the
	// field and do not act on it yet.
	Attributes map[string]string
}

// TopicWrite is what CreateTopic did on one broker.
type TopicWrite struct {
	Node
	// Created is true when the broker did not have the topic before.
	Created        bool `json:"created"`
	ReadQueueNums  int  `json:"readQueueNums"`
	WriteQueueNums int  `json:"writeQueueNums"`
	Perm           int  `json:"perm"`
	Order          bool `json:"order"`
}

// Result is "created" or "updated".
func (w TopicWrite) Result() string {
	if w.Created {
		return "created"
	}
	return "updated"
}

// maxQueueNums bounds queue counts; RocketMQ brokers refuse more.
const maxQueueNums = 1024

// defaultQueueNums is a new topic's queue count when none is given.
const defaultQueueNums = 8

// CreateTopic creates or updates spec.Topic (UPDATE_AND_CREATE_TOPIC) on
// every target broker master, in name order, and returns what was written
// to each. Each broker is first asked for its config of the topic
// (GET_TOPIC_CONFIG, else the name server's route), so that an update
// keeps what spec leaves zero. It stops at the first failure; the brokers
// before it keep the topic.
func (a *Admin) CreateTopic(ctx context.Context, spec TopicSpec) ([]TopicWrite, error) {
	if err := checkName("topic", spec.Topic); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"read queue count", spec.ReadQueueNums}, {"write queue count", spec.WriteQueueNums}} {
		if f.v != 0 && (f.v < 1 || f.v > maxQueueNums) {
			return nil, fmt.Errorf("%w: %s %d is outside 1..%d", ErrBadArgument, f.name, f.v, maxQueueNums)
		}
	}
	if spec.Perm&^(protocol.PermRead|protocol.PermWrite|protocol.PermInherit|protocol.PermPriority) != 0 || spec.Perm < 0 {
		return nil, fmt.Errorf("%w: perm %d has bits other than 8|4|2|1", ErrBadArgument, spec.Perm)
	}
	if err := CheckTopicAttributes(spec.Attributes); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("create topic %q", spec.Topic)
	targets, err := a.writeTargets(ctx, op, spec.Cluster, spec.Brokers)
	if err != nil {
		return nil, err
	}
	var route *protocol.TopicRouteData // read once, when a broker cannot say
	var out []TopicWrite
	for _, n := range targets {
		old, err := a.topicConfigOn(ctx, op, n, spec.Topic, &route)
		if err != nil {
			return out, err
		}
		w := TopicWrite{Node: n, Created: old == nil, ReadQueueNums: defaultQueueNums, WriteQueueNums: defaultQueueNums,
			Perm: protocol.PermRead | protocol.PermWrite}
		if old != nil {
			w.ReadQueueNums, w.WriteQueueNums, w.Perm, w.Order = old.ReadQueueNums, old.WriteQueueNums, old.Perm, old.Order
		}
		if spec.ReadQueueNums != 0 {
			w.ReadQueueNums = spec.ReadQueueNums
		}
		if spec.WriteQueueNums != 0 {
			w.WriteQueueNums = spec.WriteQueueNums
		}
		if spec.Perm != 0 {
			w.Perm = spec.Perm
		}
		if spec.Order != nil {
			w.Order = *spec.Order
		}
		h := protocol.CreateTopicRequestHeader{
			Topic:           spec.Topic,
			DefaultTopic:    protocol.DefaultTopicKey,
			ReadQueueNums:   int32(w.ReadQueueNums),
			WriteQueueNums:  int32(w.WriteQueueNums),
			Perm:            int32(w.Perm),
			TopicFilterType: protocol.TopicFilterSingleTag,
			Order:           w.Order,
		}
		if old == nil {
			for k := range spec.Attributes {
				if k[0] == '-' {
					return out, fmt.Errorf("%w: attribute %s: a new topic has no attribute to remove (on %s)", ErrBadArgument, k, n)
				}
			}
		}
		h.Attributes = FormatAttributes(spec.Attributes)
		if old != nil {
			h.TopicSysFlag = int32(old.TopicSysFlag)
			if old.TopicFilterType != "" {
				h.TopicFilterType = old.TopicFilterType
			}
		}
		req := protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, h.Encode(), nil)
		if _, err := a.callBrokerOK(ctx, op, n, req); err != nil {
			return out, err
		}
		out = append(out, w)
	}
	return out, nil
}

// TopicConfig asks broker node n for its config of topic
// (GET_TOPIC_CONFIG). A topic the broker does not have fails with an error
// matching ErrNotFound.
func (a *Admin) TopicConfig(ctx context.Context, n Node, topic string) (*protocol.TopicConfig, error) {
	if err := checkName("topic", topic); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("config of topic %q", topic)
	req := protocol.NewRequest(protocol.ReqGetTopicConfig, protocol.TopicRequestHeader{Topic: topic}.Encode(), nil)
	resp, err := a.callBrokerOK(ctx, op, n, req)
	if err != nil {
		return nil, err
	}
	var tc protocol.TopicConfig
	if err := protocol.UnmarshalLenient(resp.Body, &tc); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	if tc.TopicName == "" { // Java 5 wraps it: {"topicConfig":{...},...}
		var w struct {
			TopicConfig protocol.TopicConfig `json:"topicConfig"`
		}
		if protocol.UnmarshalLenient(resp.Body, &w) == nil && w.TopicConfig.TopicName != "" {
			tc = w.TopicConfig
		}
	}
	return &tc, nil
}

// topicConfigOn is n's config of topic, nil when n does not have it. A
// broker without GET_TOPIC_CONFIG (RocketMQ 4.x) is answered from the name
// server's route, read once into *route.
func (a *Admin) topicConfigOn(ctx context.Context, op string, n Node, topic string, route **protocol.TopicRouteData) (*protocol.TopicConfig, error) {
	tc, err := a.TopicConfig(ctx, n, topic)
	switch {
	case err == nil:
		return tc, nil
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case !errors.Is(err, ErrUnsupported):
		return nil, err
	}
	if *route == nil {
		r, err := a.TopicRoute(ctx, topic)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnsupported) {
			r = &protocol.TopicRouteData{}
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		*route = r
	}
	for _, qd := range (*route).QueueDatas {
		if qd.BrokerName == n.Name {
			return &protocol.TopicConfig{TopicName: topic, ReadQueueNums: qd.ReadQueueNums, WriteQueueNums: qd.WriteQueueNums,
				Perm: qd.Perm, TopicSysFlag: qd.TopicSysFlag}, nil
		}
	}
	return nil, nil
}

// UpdateTopicPerm changes only the permission of topic on the brokers of
// cluster (or the named brokers), keeping its queue counts (mqadmin
// updateTopicPerm). A broker that does not have the topic is skipped; none
// having it fails with ErrNotFound.
func (a *Admin) UpdateTopicPerm(ctx context.Context, topic, cluster string, brokers []string, perm int) ([]TopicWrite, error) {
	if perm <= 0 {
		return nil, fmt.Errorf("%w: perm %d grants nothing", ErrBadArgument, perm)
	}
	op := fmt.Sprintf("update perm of topic %q", topic)
	if err := checkName("topic", topic); err != nil {
		return nil, err
	}
	targets, err := a.writeTargets(ctx, op, cluster, brokers)
	if err != nil {
		return nil, err
	}
	var route *protocol.TopicRouteData
	var having []string
	for _, n := range targets {
		old, err := a.topicConfigOn(ctx, op, n, topic, &route)
		if err != nil {
			return nil, err
		}
		if old != nil {
			having = append(having, n.Addr)
		}
	}
	if len(having) == 0 {
		return nil, fmt.Errorf("admin: %s: %w: no broker has topic %q", op, ErrNotFound, topic)
	}
	return a.CreateTopic(ctx, TopicSpec{Topic: topic, Brokers: having, Perm: perm})
}

// writeTargets picks the masters a topic write goes to.
func (a *Admin) writeTargets(ctx context.Context, op, cluster string, brokers []string) ([]Node, error) {
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	var targets []Node
	switch {
	case len(brokers) > 0:
		targets, err = resolveBrokers(info, brokers)
	case cluster != "":
		targets, err = masterRefs(info, cluster)
	default:
		if n := len(info.ClusterAddrTable); n > 1 {
			names := make([]string, 0, n)
			for c := range info.ClusterAddrTable {
				names = append(names, c)
			}
			slices.Sort(names)
			return nil, fmt.Errorf("%w: %s: the name server knows %d clusters (%v); name one or the brokers", ErrBadArgument, op, n, names)
		}
		targets, err = masterRefs(info, "")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return targets, nil
}

// DeleteTopic deletes topic from every master of cluster (every cluster
// when "") with DELETE_TOPIC_IN_BROKER, then from every name server with
// DELETE_TOPIC_IN_NAMESRV, as mqadmin deleteTopic. It returns the brokers
// it deleted from. A topic the name server has no route for fails with an
// error matching ErrNotFound, and nothing is deleted.
func (a *Admin) DeleteTopic(ctx context.Context, topic, cluster string) ([]Node, error) {
	if err := checkName("topic", topic); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("delete topic %q", topic)
	if _, err := a.TopicRoute(ctx, topic); errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("admin: %s: %w: the name server has no route for it", op, ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	targets, err := masterRefs(info, cluster)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	req := protocol.NewRequest(protocol.ReqDeleteTopicInBroker, protocol.TopicRequestHeader{Topic: topic}.Encode(), nil)
	if done, err := a.callAll(ctx, op, targets, req); err != nil {
		return done, err
	}
	nsReq := protocol.NewRequest(protocol.ReqDeleteTopicInNameSrv,
		protocol.DeleteTopicFromNamesrvRequestHeader{Topic: topic, ClusterName: cluster}.Encode(), nil)
	if err := a.callEveryNamesrv(ctx, op, nsReq); err != nil {
		return targets, err
	}
	return targets, nil
}

// QueueStats is one queue's offset range (GET_TOPIC_STATS_INFO).
type QueueStats struct {
	Topic     string `json:"topic"`
	Broker    string `json:"brokerName"`
	QueueID   int32  `json:"queueId"`
	MinOffset int64  `json:"minOffset"`
	MaxOffset int64  `json:"maxOffset"`
	// LastUpdate is the store time of the newest message, ms since the
	// epoch; 0 when the queue is empty.
	LastUpdate int64 `json:"lastUpdateTimestamp"`
}

// TopicStats returns every queue of topic on every broker of its route,
// sorted by broker and queue.
func (a *Admin) TopicStats(ctx context.Context, topic string) ([]QueueStats, error) {
	op := fmt.Sprintf("stats of topic %q", topic)
	var out []QueueStats
	err := a.callTopicBrokers(ctx, op, protocol.ReqGetTopicStatsInfo, topic, func(n Node, resp *protocol.Command) error {
		table, err := protocol.DecodeTopicStatsTable(resp.Body)
		if err != nil {
			return fmt.Errorf("admin: %s: %s: %w", op, n, err)
		}
		for mq, o := range table.OffsetTable {
			out = append(out, QueueStats{Topic: mq.Topic, Broker: mq.BrokerName, QueueID: mq.QueueID,
				MinOffset: o.MinOffset, MaxOffset: o.MaxOffset, LastUpdate: o.LastUpdateTimestamp})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(x, y QueueStats) int {
		return cmp.Or(cmp.Compare(x.Broker, y.Broker), cmp.Compare(x.QueueID, y.QueueID))
	})
	return out, nil
}
