package grpcdoor

import (
	"context"
	"fmt"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/message"
)

// SendMessage stores a client's messages (SendMessageActivity): normal,
// FIFO (the door picks the queue by the message group, as the proxy does,
// so one group always lands on one queue), delay and timer
// (delivery_timestamp), and transactional half messages. The messages of
// one request go to one queue.
func (d *Door) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	entries, err := d.send(ctx, req)
	if err != nil {
		return &v2.SendMessageResponse{Status: statusOf(err)}, nil
	}
	return &v2.SendMessageResponse{Status: okStatus(), Entries: entries}, nil
}

func (d *Door) send(ctx context.Context, req *v2.SendMessageRequest) ([]*v2.SendResultEntry, error) {
	c, err := d.begin(ctx)
	if err != nil {
		return nil, err
	}
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return nil, refuse(v2.Code_MESSAGE_CORRUPTED, "no message to send")
	}
	topicRes := msgs[0].GetTopic()
	topic := c.name(topicRes)
	if err := checkTopic(topic); err != nil {
		return nil, err
	}
	if err := d.authorize(c, access{Topic: topic, Action: actionPub}); err != nil {
		return nil, err
	}
	if err := d.checkWritable(); err != nil {
		return nil, err
	}
	tc, err := d.topicForClient(c, topic)
	if err != nil {
		return nil, err
	}
	mt := msgs[0].GetSystemProperties().GetMessageType()
	limit := d.core.Runtime().MaxMessageSize
	r := core.SendRequest{
		ProducerGroup: topic, Topic: topic, QueueID: -1, MaxReconsumeTimes: -1,
		BornTimestamp: d.cfg.Now().UnixMilli(), BornHost: c.bornHost(), Client: c.ClientID + " " + c.Remote,
		Batch: len(msgs) > 1,
	}
	for _, m := range msgs {
		if c.name(m.GetTopic()) != topic {
			return nil, refuse(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")
		}
		if m.GetSystemProperties().GetMessageType() != mt {
			return nil, refuse(v2.Code_MESSAGE_CORRUPTED, "messages to send have different types")
		}
		if len(m.GetBody()) > limit {
			return nil, refuse(v2.Code_MESSAGE_BODY_TOO_LARGE, fmt.Sprintf("message body cannot exceed the max %d", limit))
		}
		if err := checkDigest(m); err != nil {
			return nil, err
		}
		props, err := sendProperties(c, m, topic, d.cfg.Now(), d.maxDelay())
		if err != nil {
			return nil, err
		}
		var sysFlag int32
		if m.GetSystemProperties().GetBodyEncoding() == v2.Encoding_GZIP {
			sysFlag |= message.SysFlagCompressed
		}
		if bt := m.GetSystemProperties().GetBornTimestamp(); bt.IsValid() && !r.Batch {
			r.BornTimestamp = bt.AsTime().UnixMilli()
		}
		r.SysFlag |= sysFlag
		r.Messages = append(r.Messages, core.SendMessage{Properties: props, Body: m.GetBody()})
	}
	if err := d.checkMessageType(tc, mt); err != nil {
		return nil, err
	}
	if mt == v2.MessageType_TRANSACTION {
		if r.Batch {
			return nil, refuse(v2.Code_MESSAGE_CORRUPTED, "a transactional message is sent alone")
		}
		r.SysFlag |= message.SysFlagTransactionPrep
	}
	if g := msgs[0].GetSystemProperties().GetMessageGroup(); g != "" && len(msgs) == 1 {
		r.QueueID = int32(consistentHash(javaStringHash(g), max(tc.WriteQueueNums, 1)))
	}
	res, err := d.core.Send(r)
	if err != nil {
		return nil, err
	}
	if d.cfg.Metrics != nil {
		sizes := make([]int, len(msgs))
		for i, m := range msgs {
			sizes[i] = len(m.GetBody())
		}
		d.cfg.Metrics.SentGRPC(topic, metricsType(mt), sizes)
	}
	entries := make([]*v2.SendResultEntry, len(msgs))
	for i, m := range msgs {
		e := &v2.SendResultEntry{Status: okStatus(), MessageId: m.GetSystemProperties().GetMessageId(), Offset: res.QueueOffset + int64(i),
			RecallHandle: res.RecallHandle}
		if mt == v2.MessageType_TRANSACTION && i < len(res.MsgIDs) {
			if _, phys, err := message.ParseOffsetMsgID(res.MsgIDs[i]); err == nil {
				e.TransactionId = encodeTxID(phys, res.QueueOffset)
			}
		}
		entries[i] = e
	}
	return entries, nil
}

// checkWritable refuses a write on a replicated group's follower with
// the code the SDKs retry elsewhere, naming the leader when it is known.
func (d *Door) checkWritable() error {
	if d.core.IsMaster() {
		return nil
	}
	msg := "this broker is a follower of its replicated group and takes no writes"
	if d.cfg.Leader != nil {
		if addr := d.cfg.Leader(); addr != "" {
			msg += "; its leader's gRPC door is " + addr
		}
	}
	return refuse(v2.Code_HA_NOT_AVAILABLE, msg)
}

// maxDelay is the longest a timer message may wait.
func (d *Door) maxDelay() time.Duration {
	if m := d.core.Runtime().TimerMaxDelay; m > 0 {
		return m
	}
	return due.DefaultTimerMaxDelay
}

// RecallMessage withdraws a delay or timer message before it falls due,
// given the recall handle its send was answered with
// (RecallMessageActivity): it answers the message's id.
func (d *Door) RecallMessage(ctx context.Context, req *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	id, err := d.recall(ctx, req)
	if err != nil {
		return &v2.RecallMessageResponse{Status: statusOf(err)}, nil
	}
	return &v2.RecallMessageResponse{Status: okStatus(), MessageId: id}, nil
}

func (d *Door) recall(ctx context.Context, req *v2.RecallMessageRequest) (string, error) {
	c, err := d.begin(ctx)
	if err != nil {
		return "", err
	}
	topic := c.name(req.GetTopic())
	if err := checkTopic(topic); err != nil {
		return "", err
	}
	if err := d.authorize(c, access{Topic: topic, Action: actionPub}); err != nil {
		return "", err
	}
	if err := d.checkWritable(); err != nil {
		return "", err
	}
	return d.core.Recall(topic, req.GetRecallHandle(), topic)
}

// javaStringHash is Java's String.hashCode of s (UTF-16 code units), so a
// message group lands on the queue Java's proxy would pick.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + r
	}
	return h
}

// consistentHash is Guava's Hashing.consistentHash (Lamping and Veach's
// jump hash over a linear congruential generator), which the proxy uses
// to map a message group to a queue.
func consistentHash(input int32, buckets int) int {
	state := int64(input)
	candidate := 0
	for {
		state = 2862933555777941757*state + 1
		next := int(float64(candidate+1) / (float64(int32(uint64(state)>>33)+1) / (1 << 31)))
		if next < 0 || next >= buckets {
			return candidate
		}
		candidate = next
	}
}

// metricsType is a message type as the metrics label it.
func metricsType(mt v2.MessageType) string {
	switch mt {
	case v2.MessageType_FIFO:
		return "fifo"
	case v2.MessageType_DELAY:
		return "delay"
	case v2.MessageType_TRANSACTION:
		return "transaction"
	}
	return "normal"
}
