package remotingdoor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// RocketMQ 5's remoting POP requests, served by the core's POP: what Java
// 5's remoting POP consumers (and Java's proxy) send.

// popTimeoutSlack is how late past its poll time a pop may arrive before
// it is answered POLLING_TIMEOUT unread (Java's isTimeoutTooMuch).
const popTimeoutSlack = 500 * time.Millisecond

// handlePop serves POP_MESSAGE (3442). A pop the core holds is answered
// later, through the connection's channel.
func (d *Door) handlePop(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.PopMessageRequestHeader) *protocol.Command {
	if h.BornTime > 0 && time.Since(time.UnixMilli(h.BornTime)) > time.Duration(h.PollTime)*time.Millisecond+popTimeoutSlack {
		return errResponse(req, protocol.RespPollingTimeout, "the broker[%s] pop message is timeout too much", d.brokerName())
	}
	r := core.PopRequest{
		Group: h.ConsumerGroup, Topic: h.Topic, QueueID: max(h.QueueID, -1), MaxMessages: int(h.MaxMsgNums),
		InvisibleTime: time.Duration(h.InvisibleTime) * time.Millisecond, PollTime: time.Duration(h.PollTime) * time.Millisecond,
		ExpressionType: h.ExpType, Expression: h.Exp, AttemptID: h.AttemptID, Orderly: h.Order,
		FromMin: h.InitMode == protocol.ConsumeInitModeMin, From: d.channel(c),
	}
	later := c.Defer(ctx, req)
	res, held, err := d.core.Pop(r, func(res core.PopResult, err error) {
		_ = later.Respond(popResponse(req, h.Topic, res, err))
	})
	if held {
		return nil
	}
	return popResponse(req, h.Topic, res, err)
}

// popResponse encodes a pop's answer as Java's broker does: the messages
// back to back in the stored encoding, each with its receipt handle in
// POP_CK (so a Java client takes it as it is) and the topic asked for;
// the header with what a client builds handles from.
func popResponse(req *protocol.Command, topic string, res core.PopResult, err error) *protocol.Command {
	if err != nil {
		return failure(req, err)
	}
	switch res.Status {
	case core.PopPollingFull:
		return errResponse(req, protocol.RespPollingFull, "too many pops are held on the broker; pop again later")
	case core.PopNoNewMessage:
		resp := protocol.NewResponse(req, protocol.RespPollingTimeout, "NO_MESSAGE_IN_QUEUE")
		resp.ExtFields = protocol.PopMessageResponseHeader{PopTime: res.PopTime.UnixMilli(),
			InvisibleTime: res.InvisibleTime.Milliseconds(), RestNum: res.Rest}.Encode()
		return resp
	}
	hdr := protocol.PopMessageResponseHeader{
		PopTime: res.PopTime.UnixMilli(), InvisibleTime: res.InvisibleTime.Milliseconds(), RestNum: res.Rest,
		ReviveQid: pop.PlainReviveQueue,
	}
	if res.Orderly {
		hdr.ReviveQid = pop.OrderlyReviveQueue
	}
	var body []byte
	var info popInfo
	for _, p := range res.Messages {
		h, err := pop.ParseHandle(p.Handle)
		if err != nil {
			return failure(req, core.Refuse(core.Internal, "a popped message's handle does not parse: %v", err))
		}
		info.add(h, p.DeliveryAttempt-1, res.Orderly)
		m := *p.Message
		m.Topic = topic
		m.Properties = make(map[string]string, len(p.Message.Properties)+1)
		for k, v := range p.Message.Properties {
			m.Properties[k] = v
		}
		m.Properties[message.PropertyPopCK] = p.Handle
		if body, err = message.AppendStoredMessage(body, &m); err != nil {
			return failure(req, core.Refuse(core.Internal, "encode a popped message: %v", err))
		}
	}
	hdr.StartOffsetInfo, hdr.MsgOffsetInfo, hdr.OrderCountInfo = info.strings()
	resp := protocol.NewResponse(req, protocol.RespSuccess, "FOUND")
	resp.ExtFields = hdr.Encode()
	resp.Body = body
	return resp
}

// popInfo builds a POP answer's startOffsetInfo, msgOffsetInfo and
// orderCountInfo (Java ExtraInfoUtil): per topic type and queue, in the
// order they first appear, the start offset and the messages' offsets;
// for a FIFO pop, each message's delivery count.
type popInfo struct {
	queues []popQueueInfo
	counts []string
}

type popQueueInfo struct {
	topicType pop.TopicType
	queueID   int32
	start     int64
	offsets   []string
}

func (p *popInfo) add(h pop.Handle, reconsumed int32, orderly bool) {
	i := 0
	for ; i < len(p.queues); i++ {
		if p.queues[i].topicType == h.TopicType && p.queues[i].queueID == h.QueueID {
			break
		}
	}
	if i == len(p.queues) {
		p.queues = append(p.queues, popQueueInfo{topicType: h.TopicType, queueID: h.QueueID, start: h.CkOffset})
	}
	p.queues[i].offsets = append(p.queues[i].offsets, strconv.FormatInt(h.QueueOffset, 10))
	if orderly {
		p.counts = append(p.counts, fmt.Sprintf("%d qo%d%%%d %d", h.TopicType, h.QueueID, h.QueueOffset, reconsumed))
	}
}

func (p *popInfo) strings() (start, msgs, counts string) {
	var s, m []string
	for _, q := range p.queues {
		s = append(s, fmt.Sprintf("%d %d %d", q.topicType, q.queueID, q.start))
		m = append(m, fmt.Sprintf("%d %d %s", q.topicType, q.queueID, strings.Join(q.offsets, ",")))
	}
	return strings.Join(s, ";"), strings.Join(m, ";"), strings.Join(p.counts, ";")
}

// receipt is the handle a Java client's ACK_MESSAGE or
// CHANGE_MESSAGE_INVISIBLETIME names: its extraInfo, with the queue and
// offset of the header (Java reads those from the header).
func receipt(extraInfo string, queueID int32, offset int64) (string, error) {
	h, err := pop.ParseHandle(extraInfo)
	if err != nil {
		return "", core.Refuse(core.InvalidReceipt, "receipt handle (extraInfo) is invalid: %v", err)
	}
	h.QueueID, h.QueueOffset = queueID, offset
	return h.String(), nil
}

// handleAck serves ACK_MESSAGE (3443).
func (d *Door) handleAck(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.AckMessageRequestHeader) *protocol.Command {
	handle, err := receipt(h.ExtraInfo, h.QueueID, h.Offset)
	if err != nil {
		return failure(req, err)
	}
	return outcome(req, d.core.Ack(h.ConsumerGroup, h.Topic, handle))
}

// handleBatchAck serves BATCH_ACK_MESSAGE (3543): every acknowledgement
// of the body in one call of the core. Java answers SUCCESS whatever
// became of each; Runnel answers the first refusal, saying how many of
// the others were taken.
func (d *Door) handleBatchAck(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	body, err := protocol.DecodeBatchAckBody(req.Body)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	broker := body.BrokerName
	if broker == "" {
		broker = d.brokerName()
	}
	var entries []core.AckEntry
	for _, a := range body.Acks {
		t, err := strconv.Atoi(a.Retry)
		if err != nil || t < int(pop.NormalTopic) || t > int(pop.RetryTopicV2) {
			return errResponse(req, protocol.RespSystemError, "BATCH_ACK_MESSAGE: topic type %q is not 0, 1 or 2", a.Retry)
		}
		for _, off := range a.Offsets() {
			h := pop.Handle{CkOffset: a.StartOffset, PopTime: a.PopTime, Invisible: a.InvisibleTime, ReviveQueue: a.ReviveQueueID,
				TopicType: pop.TopicType(t), BrokerName: broker, QueueID: a.QueueID, QueueOffset: off, CommitLogOffset: -1}
			entries = append(entries, core.AckEntry{Group: a.ConsumerGroup, Topic: a.Topic, Handle: h.String()})
		}
	}
	if len(entries) == 0 {
		return errResponse(req, protocol.RespNoMessage, "BATCH_ACK_MESSAGE acknowledges nothing")
	}
	errs := d.core.BatchAck(entries)
	refused := 0
	var first error
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			refused++
		}
	}
	if first == nil {
		return success(req, nil, nil)
	}
	code, remark := codeOf(first)
	return errResponse(req, code, "%d of %d acknowledgements refused, the first: %s", refused, len(entries), remark)
}

// handleChangeInvisible serves CHANGE_MESSAGE_INVISIBLETIME (3445): the
// answer carries what the message's new handle is built from.
func (d *Door) handleChangeInvisible(_ context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ChangeInvisibleTimeRequestHeader) *protocol.Command {
	handle, err := receipt(h.ExtraInfo, h.QueueID, h.Offset)
	if err != nil {
		return failure(req, err)
	}
	next, err := d.core.ChangeInvisible(h.ConsumerGroup, h.Topic, handle, time.Duration(h.InvisibleTime)*time.Millisecond)
	if err != nil {
		return failure(req, err)
	}
	nh, err := pop.ParseHandle(next)
	if err != nil {
		return failure(req, core.Refuse(core.Internal, "a changed handle does not parse: %v", err))
	}
	return success(req, protocol.ChangeInvisibleTimeResponseHeader{PopTime: nh.PopTime, InvisibleTime: nh.Invisible,
		ReviveQid: nh.ReviveQueue}.Encode(), nil)
}

// handleNotification serves NOTIFICATION (3446): whether the group has
// something to pop, held up to the poll time until it has.
func (d *Door) handleNotification(ctx context.Context, c *remoting.Conn, req *protocol.Command, h *protocol.NotificationRequestHeader) *protocol.Command {
	if h.BornTime > 0 && time.Since(time.UnixMilli(h.BornTime)) > time.Duration(h.PollTime)*time.Millisecond+popTimeoutSlack {
		return errResponse(req, protocol.RespPollingTimeout, "the broker[%s] notification is timeout too much", d.brokerName())
	}
	r := core.NotificationRequest{Group: h.ConsumerGroup, Topic: h.Topic, QueueID: max(h.QueueID, -1),
		PollTime: time.Duration(h.PollTime) * time.Millisecond, Orderly: h.Order, AttemptID: h.AttemptID, From: d.channel(c)}
	answer := func(has bool, err error) *protocol.Command {
		return answerWith(req, protocol.NotificationResponseHeader{HasMsg: has}.Encode(), nil, err)
	}
	later := c.Defer(ctx, req)
	has, held, err := d.core.Notification(r, func(has bool, err error) { _ = later.Respond(answer(has, err)) })
	if held {
		return nil
	}
	return answer(has, err)
}

// brokerName is the broker's name for remarks and handles.
func (d *Door) brokerName() string { return d.core.BrokerName() }
