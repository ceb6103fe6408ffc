package grpcdoor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/runnelmq/runnel/broker/core"
)

// POP consumption, as the proxy's ReceiveMessageActivity,
// AckMessageActivity, ChangeInvisibleDurationActivity and
// ForwardMessageToDLQActivity serve it; the behaviour is the core's.

// The proxy's receive limits (ProxyConfig).
const (
	// minInvisible and maxInvisible bound a simple consumer's
	// (minInvisibleTimeMillsForRecv, maxInvisibleTimeMills).
	minInvisible = 10 * time.Second
	maxInvisible = 12 * time.Hour
	// nackInvisible is how soon a message popped for a receive whose
	// stream broke before it was written comes back.
	nackInvisible = time.Second
	// answerMargin is kept between a held receive's answer and the
	// client's deadline, for the answer to travel.
	answerMargin = 200 * time.Millisecond
)

// ReceiveMessage pops messages for a consumer group: one status frame,
// one frame per message (with its receipt handle), then the delivery
// timestamp. A receive that finds nothing is held within the client's
// deadline (its long polling timeout, clamped to [5 s, 20 s]) and woken
// when a message arrives.
func (d *Door) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	ctx := stream.Context()
	c, r, err := d.receiveRequest(ctx, req)
	if err != nil {
		return writeReceive(stream, statusOf(err), nil, d.cfg.Now())
	}
	w := &heldReceive{d: d, r: r, answered: make(chan popAnswer, 1)}
	res, held, err := d.core.Pop(r, w.answer)
	if held {
		select {
		case a := <-w.answered:
			res, err = a.res, a.err
		case <-ctx.Done():
			w.abandon()
			return nil
		}
	}
	if err != nil {
		return writeReceive(stream, statusOf(err), nil, d.cfg.Now())
	}
	switch res.Status {
	case core.PopPollingFull:
		return writeReceive(stream, status(v2.Code_TOO_MANY_REQUESTS, "polling full"), nil, d.cfg.Now())
	case core.PopNoNewMessage:
		return writeReceive(stream, status(v2.Code_MESSAGE_NOT_FOUND, "no new message"), nil, d.cfg.Now())
	}
	if len(res.Messages) == 0 {
		return writeReceive(stream, status(v2.Code_MESSAGE_NOT_FOUND, "no match message"), nil, d.cfg.Now())
	}
	msgs := make([]*v2.Message, len(res.Messages))
	bytes := 0
	for i, p := range res.Messages {
		msgs[i] = d.toV2(c, p.Message, delivery{handle: p.Handle, invisible: res.InvisibleTime, attempt: p.DeliveryAttempt})
		bytes += len(p.Message.Body)
	}
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.DeliveredGRPC(r.Topic, r.Group, len(msgs), bytes)
	}
	if err := writeReceive(stream, okStatus(), msgs, d.cfg.Now()); err != nil {
		for _, p := range res.Messages {
			_, _ = d.core.ChangeInvisible(r.Group, r.Topic, p.Handle, nackInvisible)
		}
		return err
	}
	if req.GetAutoRenew() {
		now := d.cfg.Now()
		for i, p := range res.Messages {
			d.renew.add(renewKey{c.ClientID, r.Group, msgs[i].GetSystemProperties().GetMessageId()}, r.Topic, p.Handle, now)
		}
	}
	return nil
}

type popAnswer struct {
	res core.PopResult
	err error
}

// heldReceive is a receive the core holds: its answer goes to the
// handler, or, once the client has left, its messages are made visible
// again soon, as the proxy does with messages it could not write.
type heldReceive struct {
	d        *Door
	r        core.PopRequest
	answered chan popAnswer // one slot: answer never waits
	mu       sync.Mutex
	gone     bool
}

func (w *heldReceive) answer(res core.PopResult, err error) {
	w.mu.Lock()
	if !w.gone {
		w.answered <- popAnswer{res, err}
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.nack(res)
}

// abandon is the handler giving up: the client's deadline passed.
func (w *heldReceive) abandon() {
	w.mu.Lock()
	w.gone = true
	select {
	case a := <-w.answered:
		w.mu.Unlock()
		w.nack(a.res)
	default:
		w.mu.Unlock()
	}
}

func (w *heldReceive) nack(res core.PopResult) {
	for _, p := range res.Messages {
		_, _ = w.d.core.ChangeInvisible(w.r.Group, w.r.Topic, p.Handle, nackInvisible)
	}
}

// receiveRequest checks a receive and makes the core's pop of it.
func (d *Door) receiveRequest(ctx context.Context, req *v2.ReceiveMessageRequest) (caller, core.PopRequest, error) {
	var r core.PopRequest
	c, err := d.begin(ctx)
	if err != nil {
		return c, r, err
	}
	topic, group := c.name(req.GetMessageQueue().GetTopic()), c.name(req.GetGroup())
	if err := errors.Join(checkTopic(topic), checkGroup(group)); err != nil {
		return c, r, err
	}
	if err := d.authorize(c, access{Topic: topic, Group: group, Action: actionSub}); err != nil {
		return c, r, err
	}
	poll, err := d.pollTime(ctx, c, req)
	if err != nil {
		return c, r, err
	}
	invisible := d.renew.cfg.Invisible
	if !req.GetAutoRenew() {
		invisible = req.GetInvisibleDuration().AsDuration()
		switch {
		case invisible < minInvisible:
			return c, r, refuse(v2.Code_ILLEGAL_INVISIBLE_TIME, fmt.Sprintf("the invisibleTime is too small. min is %d", minInvisible.Milliseconds()))
		case invisible > maxInvisible:
			return c, r, refuse(v2.Code_ILLEGAL_INVISIBLE_TIME, fmt.Sprintf("the invisibleTime is too large. max is %d", maxInvisible.Milliseconds()))
		}
	}
	sub, err := subscriptionOf(c, req.GetMessageQueue().GetTopic(), req.GetFilterExpression())
	if err != nil {
		return c, r, err
	}
	if err := d.checkWritable(); err != nil {
		return c, r, err // a receive writes its in-flight state
	}
	batch := int(req.GetBatchSize())
	if batch < 1 {
		batch = 1
	}
	r = core.PopRequest{
		Group: group, Topic: topic, QueueID: req.GetMessageQueue().GetId(),
		MaxMessages: min(batch, core.MaxPopMessages), InvisibleTime: invisible, PollTime: poll,
		ExpressionType: sub.ExpressionType, Expression: sub.Expression,
		AttemptID: req.GetAttemptId(), From: d.callChannel(ctx, c),
	}
	return c, r, nil
}

// pollTime is how long a receive may be held (ReceiveMessageActivity):
// its long polling timeout, else what the client's deadline leaves after
// half its request timeout, within [5 s, 20 s] and the deadline.
func (d *Door) pollTime(ctx context.Context, c caller, req *v2.ReceiveMessageRequest) (time.Duration, error) {
	remaining := d.cfg.MaxLongPolling + time.Minute
	if dl, ok := ctx.Deadline(); ok {
		remaining = time.Until(dl) - answerMargin
	}
	var poll time.Duration
	if req.LongPollingTimeout != nil {
		poll = req.GetLongPollingTimeout().AsDuration()
	} else {
		requestTimeout := 3 * time.Second
		if st := d.sessions.get(c.ClientID).settingsOrNil(); st != nil && st.GetRequestTimeout() != nil {
			requestTimeout = st.GetRequestTimeout().AsDuration()
		}
		poll = remaining - requestTimeout/2
	}
	poll = min(max(poll, minLongPolling), max(d.cfg.MaxLongPolling, minLongPolling))
	if poll > remaining {
		if remaining < minLongPolling {
			return 0, refuse(v2.Code_ILLEGAL_POLLING_TIME, "The deadline time remaining is not enough for polling, please check network condition")
		}
		poll = remaining
	}
	return poll, nil
}

// writeReceive writes a receive's frames: its status, its messages, and
// the delivery timestamp.
func writeReceive(stream v2.MessagingService_ReceiveMessageServer, st *v2.Status, msgs []*v2.Message, now time.Time) error {
	if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}}); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
			return err
		}
	}
	return stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_DeliveryTimestamp{DeliveryTimestamp: timestamppb.New(now)}})
}

// AckMessage acknowledges received messages by their receipt handles;
// each entry has its own status, and the answer's is theirs, or
// MULTIPLE_RESULTS when they differ.
func (d *Door) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	c, topic, group, err := d.consumeCall(ctx, req.GetTopic(), req.GetGroup())
	if err != nil {
		return &v2.AckMessageResponse{Status: statusOf(err)}, nil
	}
	if len(req.GetEntries()) == 0 {
		return &v2.AckMessageResponse{Status: status(v2.Code_BAD_REQUEST, "no entry to acknowledge")}, nil
	}
	entries := make([]core.AckEntry, len(req.GetEntries()))
	for i, e := range req.GetEntries() {
		handle := d.renew.take(renewKey{c.ClientID, group, e.GetMessageId()}, e.GetReceiptHandle())
		entries[i] = core.AckEntry{Group: group, Topic: topic, Handle: handle}
	}
	errs := d.core.BatchAck(entries)
	out := &v2.AckMessageResponse{Entries: make([]*v2.AckMessageResultEntry, len(errs))}
	codes := map[v2.Code]bool{}
	for i, err := range errs {
		st := statusOf(err)
		codes[st.GetCode()] = true
		out.Entries[i] = &v2.AckMessageResultEntry{MessageId: req.GetEntries()[i].GetMessageId(),
			ReceiptHandle: req.GetEntries()[i].GetReceiptHandle(), Status: st}
	}
	out.Status = out.Entries[0].GetStatus()
	if len(codes) > 1 {
		out.Status = status(v2.Code_MULTIPLE_RESULTS, v2.Code_MULTIPLE_RESULTS.String())
	}
	return out, nil
}

// consumeCall checks a call on received messages of a group and topic.
func (d *Door) consumeCall(ctx context.Context, t, g *v2.Resource) (caller, string, string, error) {
	c, err := d.begin(ctx)
	topic, group := c.name(t), c.name(g)
	if err == nil {
		err = errors.Join(checkTopic(topic), checkGroup(group))
	}
	if err == nil {
		err = d.authorize(c, access{Topic: topic, Group: group, Action: actionSub})
	}
	if err == nil {
		err = d.checkWritable()
	}
	return c, topic, group, err
}

// ChangeInvisibleDuration sets how long a received message stays
// invisible from now, and answers its new receipt handle (the old one no
// longer names it).
func (d *Door) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	c, topic, group, err := d.consumeCall(ctx, req.GetTopic(), req.GetGroup())
	if err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: statusOf(err)}, nil
	}
	dur := req.GetInvisibleDuration().AsDuration()
	if dur < 0 || dur > maxInvisible {
		return &v2.ChangeInvisibleDurationResponse{Status: status(v2.Code_ILLEGAL_INVISIBLE_TIME,
			fmt.Sprintf("the invisibleTime %v is not in [0, %v]", dur, maxInvisible))}, nil
	}
	current := d.renew.take(renewKey{c.ClientID, group, req.GetMessageId()}, req.GetReceiptHandle())
	handle, err := d.core.ChangeInvisible(group, topic, current, dur)
	if err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: statusOf(err)}, nil
	}
	return &v2.ChangeInvisibleDurationResponse{Status: okStatus(), ReceiptHandle: handle}, nil
}

// ForwardMessageToDeadLetterQueue sends a received message to its
// group's dead-letter queue at once and acknowledges it (a FIFO push
// consumer's message that failed its local attempts).
func (d *Door) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	c, topic, group, err := d.consumeCall(ctx, req.GetTopic(), req.GetGroup())
	if err == nil {
		err = d.core.ForwardToDLQ(group, topic, d.renew.take(renewKey{c.ClientID, group, req.GetMessageId()}, req.GetReceiptHandle()))
	}
	return &v2.ForwardMessageToDeadLetterQueueResponse{Status: statusOf(err)}, nil
}
