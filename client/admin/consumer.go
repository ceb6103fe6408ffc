package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Live consumers: who is online in a group (GET_CONSUMER_CONNECTION_LIST)
// and what one of them is doing (GET_CONSUMER_RUNNING_INFO,
// CONSUME_MESSAGE_DIRECTLY, which the broker forwards to the client and
// whose answer it returns). A client heartbeats to every broker of the
// topics it consumes, so any broker can be asked; the answers of all of
// them are merged, and a request for one client goes to the brokers in
// name order until one has it online.

// ConsumerClient is one online client of a group.
type ConsumerClient struct {
	ClientID string `json:"clientId"`
	Addr     string `json:"clientAddr"` // as the broker sees it
	Language string `json:"language"`
	Version  int    `json:"version"`
	// Protocol is how the client speaks to the broker: "remoting" or
	// "grpc_v2" (a RocketMQ 5 SDK through the gRPC door). A broker that
	// does not say (a Java broker) is taken to mean remoting.
	Protocol string `json:"protocol"`
	// Brokers are the broker groups the client is connected to.
	Brokers []string `json:"brokers"`
}

// Subscription is one topic a group or client consumes.
type Subscription struct {
	Topic          string   `json:"topic"`
	Expression     string   `json:"expression"`               // "*", "a || b", or SQL92
	ExpressionType string   `json:"expressionType,omitempty"` // TAG (also when empty) or SQL92
	Tags           []string `json:"tags,omitempty"`
}

// ConsumerConnection is a group's online clients and what they subscribe.
type ConsumerConnection struct {
	Group            string           `json:"group"`
	ConsumeType      string           `json:"consumeType"`  // CONSUME_PASSIVELY (push) or CONSUME_ACTIVELY (pull)
	MessageModel     string           `json:"messageModel"` // CLUSTERING or BROADCASTING
	ConsumeFromWhere string           `json:"consumeFromWhere"`
	Clients          []ConsumerClient `json:"clients"`
	Subscriptions    []Subscription   `json:"subscriptions"`
}

// consumerConnectionBody is Java's ConsumerConnection.
type consumerConnectionBody struct {
	ConnectionSet     []protocol.Connection       `json:"connectionSet"`
	SubscriptionTable map[string]subscriptionBody `json:"subscriptionTable"`
	ConsumeType       string                      `json:"consumeType"`
	MessageModel      string                      `json:"messageModel"`
	ConsumeFromWhere  string                      `json:"consumeFromWhere"`
}

// subscriptionBody is SubscriptionData as the brokers and clients write it;
// codeSet is left out (numbers from Java, strings from the Go client).
type subscriptionBody struct {
	Topic          string   `json:"topic"`
	SubString      string   `json:"subString"`
	TagsSet        []string `json:"tagsSet"`
	ExpressionType string   `json:"expressionType"`
}

func (s subscriptionBody) public() Subscription {
	return Subscription{Topic: s.Topic, Expression: s.SubString, ExpressionType: s.ExpressionType, Tags: s.TagsSet}
}

// ConsumerConnections returns group's online clients, merged over every
// broker, sorted by client id. A group no broker has online fails with an
// error matching ErrNotOnline.
func (a *Admin) ConsumerConnections(ctx context.Context, group string) (*ConsumerConnection, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("connections of group %q", group)
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	out := &ConsumerConnection{Group: group}
	clients := map[string]*ConsumerClient{}
	subs := map[string]Subscription{}
	req := protocol.NewRequest(protocol.ReqGetConsumerConnectionList, map[string]string{"consumerGroup": group}, nil)
	err = a.callEach(ctx, op, readRefs(info), req, func(n Node, resp *protocol.Command) error {
		var body consumerConnectionBody
		if err := protocol.UnmarshalLenient(resp.Body, &body); err != nil {
			return fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
		}
		if out.MessageModel == "" {
			out.ConsumeType, out.MessageModel, out.ConsumeFromWhere = body.ConsumeType, body.MessageModel, body.ConsumeFromWhere
		}
		for _, c := range body.ConnectionSet {
			cc := clients[c.ClientID]
			if cc == nil {
				cc = &ConsumerClient{ClientID: c.ClientID, Addr: c.ClientAddr, Language: c.Language, Version: c.Version, Protocol: protocolOf(c)}
				clients[c.ClientID] = cc
			}
			cc.Brokers = append(cc.Brokers, n.Name)
		}
		for topic, s := range body.SubscriptionTable {
			if _, ok := subs[topic]; !ok {
				subs[topic] = s.public()
			}
		}
		return nil
	}, protocol.RespConsumerNotOnline)
	if err != nil {
		return nil, err
	}
	if len(clients) == 0 {
		return nil, fmt.Errorf("admin: %s: %w: no broker has a consumer of it online", op, ErrNotOnline)
	}
	for _, id := range slices.Sorted(maps.Keys(clients)) {
		out.Clients = append(out.Clients, *clients[id])
	}
	for _, t := range slices.Sorted(maps.Keys(subs)) {
		out.Subscriptions = append(out.Subscriptions, subs[t])
	}
	return out, nil
}

// ProcessQueue is a client's state of one queue it consumes (Java
// ProcessQueueInfo).
type ProcessQueue struct {
	Topic   string `json:"topic"`
	Broker  string `json:"brokerName"`
	QueueID int32  `json:"queueId"`
	// CommitOffset is the offset the client will commit next (-1 unknown).
	CommitOffset int64 `json:"commitOffset"`
	// Cached* describe the messages pulled and not yet consumed.
	CachedMsgMinOffset int64 `json:"cachedMsgMinOffset"`
	CachedMsgMaxOffset int64 `json:"cachedMsgMaxOffset"`
	CachedMsgCount     int64 `json:"cachedMsgCount"`
	CachedMsgSizeMiB   int64 `json:"cachedMsgSizeInMiB"`
	Locked             bool  `json:"locked"` // orderly consumers: the broker lock is held
	Dropped            bool  `json:"dropped"`
	LastPullTimestamp  int64 `json:"lastPullTimestamp"`    // ms
	LastConsumeTime    int64 `json:"lastConsumeTimestamp"` // ms
	LastLockTimestamp  int64 `json:"lastLockTimestamp,omitempty"`
}

// ConsumeStatus is a client's throughput on one topic (Java ConsumeStatus);
// RTs in ms, TPS per second.
type ConsumeStatus struct {
	PullRT            float64 `json:"pullRT"`
	PullTPS           float64 `json:"pullTPS"`
	ConsumeRT         float64 `json:"consumeRT"`
	ConsumeOKTPS      float64 `json:"consumeOKTPS"`
	ConsumeFailedTPS  float64 `json:"consumeFailedTPS"`
	ConsumeFailedMsgs int64   `json:"consumeFailedMsgs"` // in the last hour
}

// RunningInfo is what a consumer client reports of itself (Java
// ConsumerRunningInfo), as Runnel's client, the official Go client and
// Java's write it.
type RunningInfo struct {
	Group    string `json:"group"`
	ClientID string `json:"clientId"`
	Broker   Node   `json:"broker"` // the broker that asked the client
	// Properties are the client's settings (consumeType, messageModel,
	// consumeOrderly, PROP_CLIENT_VERSION, ...), as it names them.
	Properties    map[string]string `json:"properties"`
	Subscriptions []Subscription    `json:"subscriptions"`
	// Queues are the client's process queues, sorted.
	Queues []ProcessQueue `json:"queues"`
	// Status is per topic; empty when the client keeps no statistics.
	Status map[string]ConsumeStatus `json:"status"`
	// Stack is the client's thread or goroutine dump, when asked for.
	Stack string `json:"stack,omitempty"`
}

// runningInfoBody is the body as written; mqTable keys are MessageQueue
// objects, turned into strings by normalizeJSON.
type runningInfoBody struct {
	Properties      map[string]string  `json:"properties"`
	SubscriptionSet []subscriptionBody `json:"subscriptionSet"`
	MQTable         map[string]struct {
		ProcessQueue
		Droped *bool `json:"droped"` // Java's spelling; "dropped" from the official Go client
	} `json:"mqTable"`
	StatusTable map[string]ConsumeStatus `json:"statusTable"`
	Jstack      string                   `json:"jstack"`
}

// decodeRunningInfo parses a GET_CONSUMER_RUNNING_INFO answer body.
func decodeRunningInfo(body []byte) (*RunningInfo, error) {
	norm, err := normalizeJSON(body)
	if err != nil {
		return nil, err
	}
	var w runningInfoBody
	if err := json.Unmarshal(norm, &w); err != nil {
		return nil, err
	}
	ri := &RunningInfo{Properties: w.Properties, Status: w.StatusTable, Stack: w.Jstack}
	if ri.Properties == nil {
		ri.Properties = map[string]string{}
	}
	if ri.Status == nil {
		ri.Status = map[string]ConsumeStatus{}
	}
	for _, s := range w.SubscriptionSet {
		ri.Subscriptions = append(ri.Subscriptions, s.public())
	}
	slices.SortFunc(ri.Subscriptions, func(x, y Subscription) int { return cmp.Compare(x.Topic, y.Topic) })
	for key, v := range w.MQTable {
		var mq protocol.MessageQueue
		if err := json.Unmarshal([]byte(key), &mq); err != nil {
			return nil, fmt.Errorf("mqTable key %s: %v", key, err)
		}
		pq := v.ProcessQueue
		pq.Topic, pq.Broker, pq.QueueID = mq.Topic, mq.BrokerName, mq.QueueID
		if v.Droped != nil {
			pq.Dropped = *v.Droped
		}
		ri.Queues = append(ri.Queues, pq)
	}
	slices.SortFunc(ri.Queues, func(x, y ProcessQueue) int {
		return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Broker, y.Broker), cmp.Compare(x.QueueID, y.QueueID))
	})
	return ri, nil
}

// ConsumerRunningInfo asks clientID of group, through a broker it is
// connected to, for its running info; with stack the client adds its
// thread or goroutine dump. The broker waits for the client for its own
// timeout (5 s by default in Runnel); a CallTimeout at or below that
// reports a client that does not answer as a timeout of the call itself.
// A client no broker has online fails with an error matching ErrNotOnline.
func (a *Admin) ConsumerRunningInfo(ctx context.Context, group, clientID string, stack bool) (*RunningInfo, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	if strings.TrimSpace(clientID) == "" {
		return nil, fmt.Errorf("%w: client id is empty", ErrBadArgument)
	}
	op := fmt.Sprintf("running info of %s in group %q", clientID, group)
	hdr := protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: group, ClientID: clientID, JstackEnable: stack}.Encode()
	resp, n, err := a.callConsumer(ctx, op, protocol.NewRequest(protocol.ReqGetConsumerRunningInfo, hdr, nil))
	if err != nil {
		return nil, err
	}
	ri, err := decodeRunningInfo(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	ri.Group, ri.ClientID, ri.Broker = group, clientID, n
	return ri, nil
}

// callConsumer sends req, which names a client, to the brokers in name
// order until one has that client online, and returns its SUCCESS answer.
func (a *Admin) callConsumer(ctx context.Context, op string, req *protocol.Command) (*protocol.Command, Node, error) {
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, Node{}, err
	}
	return a.callConsumerOn(ctx, op, readRefs(info), req)
}

func (a *Admin) callConsumerOn(ctx context.Context, op string, nodes []Node, req *protocol.Command) (*protocol.Command, Node, error) {
	for _, n := range nodes {
		resp, err := a.callBroker(ctx, op, n, req)
		if err != nil {
			return nil, n, err
		}
		if resp.Code == protocol.RespSystemError && strings.HasSuffix(resp.Remark, "> not online") {
			continue // Java's "The Consumer <g> <id> not online": try the next broker
		}
		if resp.Code != protocol.RespSuccess {
			return nil, n, responseError(op, n.String(), resp)
		}
		return resp, n, nil
	}
	return nil, Node{}, fmt.Errorf("admin: %s: %w: no broker has that client online", op, ErrNotOnline)
}

// DirectResult is a client's answer to CONSUME_MESSAGE_DIRECTLY (Java
// ConsumeMessageDirectlyResult).
type DirectResult struct {
	Order      bool `json:"order"`
	AutoCommit bool `json:"autoCommit"`
	// Result is Java's CMResult: CR_SUCCESS, CR_LATER, CR_ROLLBACK,
	// CR_COMMIT, CR_THROW_EXCEPTION or CR_RETURN_NULL.
	Result    string `json:"consumeResult"`
	Remark    string `json:"remark,omitempty"`
	SpentTime int64  `json:"spentTimeMillis"`
}

// cmResults are Java's CMResult names in ordinal order; the Go clients
// write the ordinal, Java the name.
var cmResults = []string{"CR_SUCCESS", "CR_LATER", "CR_ROLLBACK", "CR_COMMIT", "CR_THROW_EXCEPTION", "CR_RETURN_NULL"}

// ConsumeMessageDirectly has clientID of group run its listener on one
// stored message, named by its offsetMsgId, outside its normal flow (no
// offsets move). The request goes to the broker that stored it, the host
// the id encodes.
func (a *Admin) ConsumeMessageDirectly(ctx context.Context, group, clientID, offsetMsgID string) (*DirectResult, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	host, _, err := message.ParseOffsetMsgID(offsetMsgID)
	if err != nil {
		return nil, fmt.Errorf("%w: message id %q: %v", ErrBadArgument, offsetMsgID, err)
	}
	op := fmt.Sprintf("consume message %s directly on %s in group %q", offsetMsgID, clientID, group)
	req := protocol.NewRequest(protocol.ReqConsumeMessageDirectly,
		map[string]string{"consumerGroup": group, "clientId": clientID, "msgId": offsetMsgID}, nil)
	resp, n, err := a.callConsumerOn(ctx, op, []Node{{Addr: host.String()}}, req)
	if err != nil {
		return nil, err
	}
	var w struct {
		Order          bool            `json:"order"`
		AutoCommit     bool            `json:"autoCommit"`
		ConsumeResult  json.RawMessage `json:"consumeResult"`
		Remark         string          `json:"remark"`
		SpentTimeMills int64           `json:"spentTimeMills"`
	}
	if err := protocol.UnmarshalLenient(resp.Body, &w); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w: %v", op, n, protocol.ErrBadBody, err)
	}
	res := &DirectResult{Order: w.Order, AutoCommit: w.AutoCommit, Remark: w.Remark, SpentTime: w.SpentTimeMills}
	var ord int
	if json.Unmarshal(w.ConsumeResult, &ord) == nil && ord >= 0 && ord < len(cmResults) {
		res.Result = cmResults[ord]
	} else {
		_ = json.Unmarshal(w.ConsumeResult, &res.Result)
	}
	return res, nil
}
