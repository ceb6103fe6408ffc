package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Reading a queue's messages as a tool does (Java's tools pull under
// MixAll.TOOLS_CONSUMER_GROUP): plain PULL_MESSAGE requests that carry
// their own subscription ("*"), hold nothing on the broker and commit no
// offset, so no consumer group's progress moves and no client shows up
// online.

// ToolsConsumerGroup is the consumer group admin reads pull under (Java
// MixAll.TOOLS_CONSUMER_GROUP).
const ToolsConsumerGroup = "TOOLS_CONSUMER"

// maxPullBatch bounds one pull (Java's pull consumers ask for 32).
const maxPullBatch = 32

// Pulled is one pull's answer.
type Pulled struct {
	// Messages are those found from the offset asked for, in queue order.
	Messages []*protocol.MessageExt
	// Next is the offset to read from next; Min and Max are the queue's
	// bounds when the broker answered.
	Next, Min, Max int64
}

// queueNode is the node to read mq from: its broker group's master, or the
// lowest slave when the master is gone.
func (a *Admin) queueNode(ctx context.Context, mq queue.MessageQueue) (Node, error) {
	route, err := a.TopicRoute(ctx, mq.Topic)
	if err != nil {
		return Node{}, err
	}
	for _, n := range routeRefs(route) {
		if n.Name == mq.BrokerName {
			return n, nil
		}
	}
	return Node{}, fmt.Errorf("%w: topic %q has no queue on broker %q", ErrNoBroker, mq.Topic, mq.BrokerName)
}

// Pull reads up to max messages (at most 32) of mq from offset, without
// committing anything. An offset outside the queue answers no messages and
// the queue's bounds, Next being where the broker says to go.
func (a *Admin) Pull(ctx context.Context, mq queue.MessageQueue, offset int64, max int) (*Pulled, error) {
	n, err := a.queueNode(ctx, mq)
	if err != nil {
		return nil, err
	}
	return a.pullFrom(ctx, n, mq, offset, max)
}

func (a *Admin) pullFrom(ctx context.Context, n Node, mq queue.MessageQueue, offset int64, max int) (*Pulled, error) {
	if max < 1 || max > maxPullBatch {
		max = maxPullBatch
	}
	op := fmt.Sprintf("pull %s at %d", mq, offset)
	h := protocol.PullMessageRequestHeader{
		ConsumerGroup: ToolsConsumerGroup, Topic: mq.Topic, QueueID: mq.QueueID, QueueOffset: offset,
		MaxMsgNums: int32(max), SysFlag: protocol.BuildPullSysFlag(false, false, true, false),
		Subscription: "*", ExpressionType: "TAG", SubVersion: time.Now().UnixMilli(), BrokerName: mq.BrokerName,
	}
	resp, err := a.callBroker(ctx, op, n, protocol.NewRequest(protocol.ReqPullMessage, h.Encode(), nil))
	if err != nil {
		return nil, err
	}
	switch resp.Code {
	case protocol.RespSuccess, protocol.RespPullNotFound, protocol.RespPullRetryImmediately, protocol.RespPullOffsetMoved:
	default:
		return nil, responseError(op, n.String(), resp)
	}
	var rh protocol.PullMessageResponseHeader
	if err := rh.Decode(resp.Fields()); err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w", op, n, err)
	}
	out := &Pulled{Next: rh.NextBeginOffset, Min: rh.MinOffset, Max: rh.MaxOffset}
	if resp.Code == protocol.RespSuccess {
		msgs, err := message.DecodeMessages(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("admin: %s: %s: %w", op, n, err)
		}
		out.Messages = msgs
	}
	return out, nil
}

// ScanQueue hands visit the messages of mq from offset from up to (not
// including) to, in batches, until visit returns false or the queue ends
// short of to (retention cut it, say). It commits nothing.
func (a *Admin) ScanQueue(ctx context.Context, mq queue.MessageQueue, from, to int64, visit func(*protocol.MessageExt) bool) error {
	n, err := a.queueNode(ctx, mq)
	if err != nil {
		return err
	}
	for off := from; off < to; {
		res, err := a.pullFrom(ctx, n, mq, off, int(min(maxPullBatch, to-off)))
		if err != nil {
			return err
		}
		for _, m := range res.Messages {
			if m.QueueOffset >= to {
				return nil
			}
			if !visit(m) {
				return nil
			}
		}
		if res.Next <= off {
			return nil
		}
		if len(res.Messages) == 0 && res.Next >= res.Max {
			return nil // nothing more stored
		}
		off = res.Next
	}
	return nil
}

// QueueOffsetAt returns the offset of the first message of mq stored at or
// after t (SEARCH_OFFSET_BY_TIMESTAMP); past the newest message it is the
// queue's max offset.
func (a *Admin) QueueOffsetAt(ctx context.Context, mq queue.MessageQueue, t time.Time) (int64, error) {
	n, err := a.queueNode(ctx, mq)
	if err != nil {
		return 0, err
	}
	op := fmt.Sprintf("offset of %s at %s", mq, t.UTC().Format(time.RFC3339))
	req := protocol.NewRequest(protocol.ReqSearchOffsetByTimestamp,
		protocol.SearchOffsetRequestHeader{Topic: mq.Topic, QueueID: mq.QueueID, Timestamp: t.UnixMilli()}.Encode(), nil)
	return a.offsetAnswer(ctx, op, n, req)
}

// offsetAnswer sends req, whose answer is {"offset": n} (GET_MIN_OFFSET,
// GET_MAX_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP), and returns n.
func (a *Admin) offsetAnswer(ctx context.Context, op string, n Node, req *protocol.Command) (int64, error) {
	resp, err := a.callBrokerOK(ctx, op, n, req)
	if err != nil {
		return 0, err
	}
	var off protocol.SearchOffsetResponseHeader
	if err := off.Decode(resp.ExtFields); err != nil {
		return 0, fmt.Errorf("admin: %s: %s: %w", op, n, err)
	}
	return off.Offset, nil
}
