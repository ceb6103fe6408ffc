package grpcdoor

import (
	"context"
	"errors"
	"fmt"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/message"
)

// Offset-based consumption: the Java proxy answers PullMessage,
// UpdateOffset, GetOffset and QueryOffset UNIMPLEMENTED; this door serves
// them over the core's pulls and consumer offsets, as a remoting pull
// consumer gets them, so a client of the v2 protocol can consume by
// offset (and its offsets are the group's, seen by every door).

// maxPullBatch bounds a pull's messages (the remoting pull's limit).
const maxPullBatch = 32

// PullMessage streams a queue's messages from an offset: a status frame,
// the messages, then the next offset to pull from. With a long polling
// timeout a pull that finds nothing is held until a message arrives or
// the timeout passes.
func (d *Door) PullMessage(req *v2.PullMessageRequest, stream v2.MessagingService_PullMessageServer) error {
	ctx := stream.Context()
	c, err := d.begin(ctx)
	topic, group := c.name(req.GetMessageQueue().GetTopic()), c.name(req.GetGroup())
	if err == nil {
		err = errors.Join(checkTopic(topic), checkGroup(group))
	}
	if err == nil {
		err = d.authorize(c, access{Topic: topic, Group: group, Action: actionSub})
	}
	if err != nil {
		return sendPull(stream, statusOf(err), nil, req.GetOffset())
	}
	sub, err := subscriptionOf(c, req.GetMessageQueue().GetTopic(), req.GetFilterExpression())
	if err != nil {
		return sendPull(stream, statusOf(err), nil, req.GetOffset())
	}
	batch := req.GetBatchSize()
	if batch <= 0 || batch > maxPullBatch {
		batch = maxPullBatch
	}
	wait := req.GetLongPollingTimeout().AsDuration()
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-time.Second) // answered before the client gives up
	}
	r := core.PullRequest{
		Group: group, Topic: topic, QueueID: req.GetMessageQueue().GetId(), QueueOffset: req.GetOffset(),
		MaxMsgNums: batch, Suspend: wait > 0, SuspendTimeout: wait,
		HasSubscription: true, ExpressionType: sub.ExpressionType, Expression: sub.Expression,
		From: d.callChannel(ctx, c),
	}
	answered := make(chan pullAnswer, 1)
	res, held, err := d.core.Pull(r, func(res core.PullResult, err error) { answered <- pullAnswer{res, err} })
	if held {
		select {
		case a := <-answered:
			res, err = a.res, a.err
		case <-ctx.Done():
			return nil
		}
	}
	return d.answerPull(c, stream, group, topic, req.GetOffset(), res, err)
}

type pullAnswer struct {
	res core.PullResult
	err error
}

// answerPull writes a pull's answer.
func (d *Door) answerPull(c caller, stream v2.MessagingService_PullMessageServer, group, topic string, from int64, res core.PullResult, err error) error {
	if res.Recycle != nil {
		defer res.Recycle() // the messages are copied into the frames below
	}
	if err != nil {
		return sendPull(stream, statusOf(err), nil, from)
	}
	switch res.Status {
	case core.PullNoNewMessage:
		return sendPull(stream, status(v2.Code_MESSAGE_NOT_FOUND, "no new message"), nil, res.NextBeginOffset)
	case core.PullOffsetMoved:
		return sendPull(stream, status(v2.Code_ILLEGAL_OFFSET, fmt.Sprintf(
			"offset %d is outside the queue [%d, %d); resume from %d", from, res.MinOffset, res.MaxOffset, res.NextBeginOffset)), nil, res.NextBeginOffset)
	case core.PullRetry:
		return sendPull(stream, okStatus(), nil, res.NextBeginOffset)
	}
	msgs := make([]*v2.Message, 0, res.Count)
	b, bytes := res.Messages, len(res.Messages)
	for len(b) > 0 {
		m, n, err := message.DecodeStoredMessage(b, true)
		if err != nil {
			return sendPull(stream, status(v2.Code_INTERNAL_SERVER_ERROR, "a stored message does not decode: "+err.Error()), nil, from)
		}
		msgs = append(msgs, d.toV2(c, m, delivery{}))
		b = b[n:]
	}
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.DeliveredGRPC(topic, group, len(msgs), bytes)
	}
	return sendPull(stream, okStatus(), msgs, res.NextBeginOffset)
}

// sendPull writes a pull's frames: its status, its messages, the next
// offset.
func sendPull(stream v2.MessagingService_PullMessageServer, st *v2.Status, msgs []*v2.Message, next int64) error {
	if err := stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Status{Status: st}}); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	return stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_NextOffset{NextOffset: next}})
}

// UpdateOffset commits a group's offset on a queue.
func (d *Door) UpdateOffset(ctx context.Context, req *v2.UpdateOffsetRequest) (*v2.UpdateOffsetResponse, error) {
	_, topic, group, err := d.offsetCall(ctx, req.GetGroup(), req.GetMessageQueue())
	if err != nil {
		return &v2.UpdateOffsetResponse{Status: statusOf(err)}, nil
	}
	if req.GetOffset() < 0 {
		return &v2.UpdateOffsetResponse{Status: status(v2.Code_ILLEGAL_OFFSET, "an offset is not negative")}, nil
	}
	d.core.CommitConsumerOffset(group, topic, req.GetMessageQueue().GetId(), req.GetOffset())
	return &v2.UpdateOffsetResponse{Status: okStatus()}, nil
}

// GetOffset answers a group's committed offset on a queue;
// OFFSET_NOT_FOUND when it committed none.
func (d *Door) GetOffset(ctx context.Context, req *v2.GetOffsetRequest) (*v2.GetOffsetResponse, error) {
	_, topic, group, err := d.offsetCall(ctx, req.GetGroup(), req.GetMessageQueue())
	if err != nil {
		return &v2.GetOffsetResponse{Status: statusOf(err)}, nil
	}
	off, ok := d.core.ConsumerOffset(group, topic, req.GetMessageQueue().GetId())
	if !ok {
		return &v2.GetOffsetResponse{Status: status(v2.Code_OFFSET_NOT_FOUND, fmt.Sprintf(
			"group %s has committed no offset on %s queue %d", group, topic, req.GetMessageQueue().GetId()))}, nil
	}
	return &v2.GetOffsetResponse{Status: okStatus(), Offset: off}, nil
}

// offsetCall checks an offset call of a group on a queue.
func (d *Door) offsetCall(ctx context.Context, g *v2.Resource, mq *v2.MessageQueue) (caller, string, string, error) {
	c, err := d.begin(ctx)
	topic, group := c.name(mq.GetTopic()), c.name(g)
	if err == nil {
		err = errors.Join(checkTopic(topic), checkGroup(group))
	}
	if err == nil {
		err = d.authorize(c, access{Topic: topic, Group: group, Action: actionSub})
	}
	return c, topic, group, err
}

// QueryOffset answers a queue's first or next offset, or the first
// offset stored at or after a time.
func (d *Door) QueryOffset(ctx context.Context, req *v2.QueryOffsetRequest) (*v2.QueryOffsetResponse, error) {
	c, err := d.begin(ctx)
	topic := c.name(req.GetMessageQueue().GetTopic())
	if err == nil {
		err = checkTopic(topic)
	}
	if err == nil {
		err = d.authorize(c, access{Topic: topic, Action: actionGet})
	}
	if err != nil {
		return &v2.QueryOffsetResponse{Status: statusOf(err)}, nil
	}
	if _, ok := d.core.Topic(topic); !ok {
		return &v2.QueryOffsetResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic "+topic+" not exist")}, nil
	}
	q := req.GetMessageQueue().GetId()
	var off int64
	switch req.GetQueryOffsetPolicy() {
	case v2.QueryOffsetPolicy_BEGINNING:
		off = d.core.MinOffset(topic, q)
	case v2.QueryOffsetPolicy_END:
		off = d.core.MaxOffset(topic, q)
	case v2.QueryOffsetPolicy_TIMESTAMP:
		if req.GetTimestamp() == nil {
			return &v2.QueryOffsetResponse{Status: status(v2.Code_BAD_REQUEST, "a TIMESTAMP query names its timestamp")}, nil
		}
		if off, err = d.core.SearchOffset(topic, q, req.GetTimestamp().AsTime().UnixMilli()); err != nil {
			return &v2.QueryOffsetResponse{Status: statusOf(err)}, nil
		}
	default:
		return &v2.QueryOffsetResponse{Status: status(v2.Code_BAD_REQUEST, "unknown query offset policy "+req.GetQueryOffsetPolicy().String())}, nil
	}
	return &v2.QueryOffsetResponse{Status: okStatus(), Offset: off}, nil
}

// callChannel is one call's client as the core sees it while the call is
// held: gone once the call ends. It takes no calls of the core's.
func (d *Door) callChannel(ctx context.Context, c caller) core.Channel {
	return &callChannel{ctx: ctx, id: channelIDBit | d.sessions.nextID.Add(1), remote: c.Remote}
}

type callChannel struct {
	core.NoCallbacks
	ctx    context.Context
	id     uint64
	remote string
}

func (ch *callChannel) ID() uint64         { return ch.id }
func (ch *callChannel) RemoteAddr() string { return ch.remote }
func (ch *callChannel) Closed() bool       { return ch.ctx.Err() != nil }
