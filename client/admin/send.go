package admin

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Sending one message as a tool does (mqadmin sendMessage, the dashboard's
// "send a test message"): one SEND_MESSAGE_V2 to the master of a writable
// queue, no retries, no producer left behind (nothing heartbeats, so no
// producer group shows up online).

// ToolsProducerGroup is the producer group admin sends are made under.
const ToolsProducerGroup = "TOOLS_PRODUCER"

// Send describes one message to send.
type Send struct {
	// Topic is required.
	Topic string
	// Tags and Keys are the message's TAGS and KEYS; none by default.
	Tags string
	Keys []string
	// Properties are user properties added to the message; they may not
	// name the system properties set here (TAGS, KEYS, UNIQ_KEY, WAIT).
	Properties map[string]string
	Body       []byte
	// Flag is the user flag; 0 by default.
	Flag int32
	// Queue picks the queue; the zero value (Topic "") lets Send pick the
	// writable queues of the route in turn.
	Queue queue.MessageQueue
}

// SendResult is where a message was stored.
type SendResult struct {
	MsgID       string `json:"msgId"` // the client id (UNIQ_KEY)
	OffsetMsgID string `json:"offsetMsgId"`
	Topic       string `json:"topic"`
	Broker      string `json:"brokerName"`
	QueueID     int32  `json:"queueId"`
	QueueOffset int64  `json:"queueOffset"`
}

// SendMessage sends s once and returns where it was stored. A broker's
// refusal (no permission, the topic not there, flow control) is a
// *ResponseError; nothing is retried.
func (a *Admin) SendMessage(ctx context.Context, s Send) (*SendResult, error) {
	if err := checkName("topic", s.Topic); err != nil {
		return nil, err
	}
	for k := range s.Properties {
		switch k {
		case protocol.PropertyTags, protocol.PropertyKeys, protocol.PropertyUniqClientMessageIDKey, protocol.PropertyWaitStoreMsgOK:
			return nil, fmt.Errorf("%w: property %s is set by the send itself", ErrBadArgument, k)
		}
		if k == "" || strings.ContainsAny(k, "\x01\x02") || strings.ContainsAny(s.Properties[k], "\x01\x02") {
			return nil, fmt.Errorf("%w: property %q holds a separator byte", ErrBadArgument, k)
		}
	}
	op := fmt.Sprintf("send to topic %q", s.Topic)
	route, err := a.TopicRoute(ctx, s.Topic)
	if err != nil {
		return nil, err
	}
	mq, n, err := a.sendQueue(route, s)
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %w", op, err)
	}
	props := maps.Clone(s.Properties)
	if props == nil {
		props = map[string]string{}
	}
	if s.Tags != "" {
		props[protocol.PropertyTags] = s.Tags
	}
	if len(s.Keys) > 0 {
		props[protocol.PropertyKeys] = strings.Join(s.Keys, " ")
	}
	props[protocol.PropertyWaitStoreMsgOK] = "true"
	props[protocol.PropertyUniqClientMessageIDKey] = message.NewUniqID()
	h := protocol.SendMessageRequestHeader{
		ProducerGroup: ToolsProducerGroup, Topic: s.Topic, DefaultTopic: protocol.DefaultTopicKey,
		DefaultTopicQueueNums: 4, QueueID: mq.QueueID, BornTimestamp: time.Now().UnixMilli(),
		Flag: s.Flag, Properties: message.MarshalProperties(props), MaxReconsumeTimes: -1, BrokerName: mq.BrokerName,
	}
	resp, err := a.callBrokerOK(ctx, op, n, protocol.NewRequest(protocol.ReqSendMessageV2, h.EncodeV2(), s.Body))
	if err != nil {
		return nil, err
	}
	var rh protocol.SendMessageResponseHeader
	if err := rh.Decode(resp.Fields()); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w", op, n, err)
	}
	return &SendResult{MsgID: props[protocol.PropertyUniqClientMessageIDKey], OffsetMsgID: rh.MsgID, Topic: s.Topic,
		Broker: mq.BrokerName, QueueID: rh.QueueID, QueueOffset: rh.QueueOffset}, nil
}

// sendQueue picks s's queue and its broker master: the one s names, or
// the next writable queue of the route in turn.
func (a *Admin) sendQueue(route *protocol.TopicRouteData, s Send) (queue.MessageQueue, Node, error) {
	masters := map[string]string{}
	for _, bd := range route.BrokerDatas {
		if addr := bd.MasterAddr(); addr != "" {
			masters[bd.BrokerName] = addr
		}
	}
	var mqs []queue.MessageQueue
	for _, qd := range route.QueueDatas {
		if qd.Perm&protocol.PermWrite == 0 || masters[qd.BrokerName] == "" {
			continue
		}
		for q := range int32(qd.WriteQueueNums) {
			mqs = append(mqs, queue.MessageQueue{Topic: s.Topic, BrokerName: qd.BrokerName, QueueID: q})
		}
	}
	slices.SortFunc(mqs, func(x, y queue.MessageQueue) int {
		return cmp.Or(cmp.Compare(x.BrokerName, y.BrokerName), cmp.Compare(x.QueueID, y.QueueID))
	})
	if s.Queue.Topic != "" {
		if !slices.Contains(mqs, s.Queue) {
			return queue.MessageQueue{}, Node{}, fmt.Errorf("%w: %s is not a writable queue of the topic", ErrBadArgument, s.Queue)
		}
		return s.Queue, Node{Name: s.Queue.BrokerName, Addr: masters[s.Queue.BrokerName]}, nil
	}
	if len(mqs) == 0 {
		return queue.MessageQueue{}, Node{}, fmt.Errorf("%w: the topic has no writable queue on a broker with a master", ErrNoBroker)
	}
	mq := mqs[int(a.sendSeq.Add(1)-1)%len(mqs)]
	return mq, Node{Name: mq.BrokerName, Addr: masters[mq.BrokerName]}, nil
}
