package pop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadHandle is returned (wrapped) for a receipt handle that does not
// parse.
var ErrBadHandle = errors.New("pop: malformed receipt handle")

// OrderlyReviveQueue is the revive queue id a FIFO pop's handles carry
// (Java KeyBuilder.POP_ORDER_REVIVE_QUEUE); a plain pop's carry
// PlainReviveQueue. Clients tell a FIFO handle by it.
const (
	OrderlyReviveQueue = 999
	PlainReviveQueue   = 0
)

// TopicType says which topic a handle's message was read from: the topic
// itself or the group's POP retry topic (Java ExtraInfoUtil's 0, 1, 2).
type TopicType uint8

const (
	// NormalTopic: the topic the consumer asked for.
	NormalTopic TopicType = iota
	// RetryTopicV1: %RETRY%<group>_<topic>, where un-acknowledged
	// messages come back (the one Runnel writes; Java's default).
	RetryTopicV1
	// RetryTopicV2: %RETRY%<group>+<topic> (Java's enableRetryTopicV2).
	RetryTopicV2
)

// maxHandleLen bounds what ParseHandle reads: a handle is nine numbers
// and a broker name.
const maxHandleLen = 512

// Handle is a receipt handle: what a consumer gives back to acknowledge a
// popped message or change its invisible time. Its text is Java's
// (ExtraInfoUtil.buildExtraInfo, with the proxy's ReceiptHandle appending
// the commit log offset), nine fields separated by single spaces:
//
//	ckOffset popTime invisibleTime reviveQueue topicType brokerName queueId queueOffset [commitLogOffset]
//
// so Java's remoting POP consumers, which build it themselves from a POP
// answer's header, and gRPC clients, to whom it is opaque, hand back the
// same thing. A handle names an in-flight record by (group, the topic its
// type names, queue, offset) and the record's pop time: a handle whose
// record is gone, or was popped again or had its invisible time changed
// since (a new pop time), names nothing in flight.
type Handle struct {
	// CkOffset is the first queue offset the pop read on the message's
	// queue (Java's checkpoint start offset).
	CkOffset int64
	// PopTime (ms) is when the message was popped, or its invisible time
	// last changed: with the record's key, the handle's identity.
	PopTime int64
	// Invisible (ms) is how long after PopTime the message stays
	// invisible; PopTime + Invisible is when the handle expires.
	Invisible int64
	// ReviveQueue is PlainReviveQueue or OrderlyReviveQueue.
	ReviveQueue int32
	TopicType   TopicType
	BrokerName  string
	QueueID     int32
	QueueOffset int64
	// CommitLogOffset is the message's physical offset; -1 when the
	// handle came without one (Java's remoting clients build eight
	// fields).
	CommitLogOffset int64
}

// Orderly says whether the handle is a FIFO pop's.
func (h Handle) Orderly() bool { return h.ReviveQueue == OrderlyReviveQueue }

// Expiry is when the handle stops being valid (Unix ms).
func (h Handle) Expiry() int64 { return h.PopTime + h.Invisible }

// String is the handle's text.
func (h Handle) String() string {
	b := make([]byte, 0, 96)
	b = strconv.AppendInt(b, h.CkOffset, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, h.PopTime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, h.Invisible, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(h.ReviveQueue), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(h.TopicType), 10)
	b = append(b, ' ')
	b = append(b, h.BrokerName...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(h.QueueID), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, h.QueueOffset, 10)
	if h.CommitLogOffset >= 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, h.CommitLogOffset, 10)
	}
	return string(b)
}

// ParseHandle parses a handle's text. It refuses, with an ErrBadHandle
// saying what is wrong, anything but eight or nine fields of the right
// kinds: numbers in decimal, none negative, the revive queue one of the
// two, the topic type one of the three, a broker name.
func ParseHandle(s string) (Handle, error) {
	if len(s) > maxHandleLen {
		return Handle{}, fmt.Errorf("%w: %d bytes", ErrBadHandle, len(s))
	}
	var f [9]string
	n := 0
	for rest := s; ; n++ {
		if n == len(f) {
			return Handle{}, fmt.Errorf("%w: more than %d fields", ErrBadHandle, len(f))
		}
		field, tail, more := strings.Cut(rest, " ")
		f[n] = field
		if !more {
			n++
			break
		}
		rest = tail
	}
	if n < 8 {
		return Handle{}, fmt.Errorf("%w: %d fields, want 8 or 9", ErrBadHandle, n)
	}
	p := parser{}
	h := Handle{
		CkOffset:        p.int64("start offset", f[0]),
		PopTime:         p.int64("pop time", f[1]),
		Invisible:       p.int64("invisible time", f[2]),
		ReviveQueue:     p.int32("revive queue", f[3]),
		BrokerName:      f[5],
		QueueID:         p.int32("queue id", f[6]),
		QueueOffset:     p.int64("queue offset", f[7]),
		CommitLogOffset: -1,
	}
	t := p.int32("topic type", f[4])
	if n == 9 {
		h.CommitLogOffset = p.int64("commit log offset", f[8])
	}
	switch {
	case p.err != nil:
		return Handle{}, p.err
	case t > int32(RetryTopicV2):
		return Handle{}, fmt.Errorf("%w: topic type %d", ErrBadHandle, t)
	case h.ReviveQueue != PlainReviveQueue && h.ReviveQueue != OrderlyReviveQueue && (h.ReviveQueue < 0 || h.ReviveQueue >= javaReviveQueues):
		return Handle{}, fmt.Errorf("%w: revive queue %d", ErrBadHandle, h.ReviveQueue)
	case h.BrokerName == "":
		return Handle{}, fmt.Errorf("%w: no broker name", ErrBadHandle)
	case h.Invisible > maxInvisibleMillis:
		return Handle{}, fmt.Errorf("%w: invisible time %d ms", ErrBadHandle, h.Invisible)
	}
	h.TopicType = TopicType(t)
	return h, nil
}

// javaReviveQueues is how many revive queues a Java broker spreads plain
// pops over (reviveQueueNum, 8); a handle from a Java-built client names
// one of them, which Runnel reads as a plain pop's.
const javaReviveQueues = 8

// maxInvisibleMillis bounds a handle's invisible time, so PopTime +
// Invisible cannot overflow: far beyond the 12 h a client may ask for.
const maxInvisibleMillis = 1 << 40

// parser reads a handle's numbers; the first error sticks.
type parser struct{ err error }

func (p *parser) int64(what, s string) int64 {
	if p.err != nil {
		return 0
	}
	if s == "" || s[0] == '+' || s[0] == '-' {
		p.err = fmt.Errorf("%w: %s %q", ErrBadHandle, what, s)
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		p.err = fmt.Errorf("%w: %s %q", ErrBadHandle, what, s)
		return 0
	}
	return v
}

func (p *parser) int32(what, s string) int32 {
	v := p.int64(what, s)
	if p.err == nil && int64(int32(v)) != v {
		p.err = fmt.Errorf("%w: %s %q", ErrBadHandle, what, s)
		return 0
	}
	return int32(v)
}

// retryPrefix starts every retry topic's name (MixAll.RETRY_GROUP_TOPIC_PREFIX).
const retryPrefix = "%RETRY%"

// RetryTopic is the topic a group's un-acknowledged messages of topic
// come back through: %RETRY%<group>_<topic> (Java KeyBuilder's
// buildPopRetryTopicV1, its default in 5.x; the name keeps to RocketMQ's
// topic alphabet, which V2's '+' leaves).
func RetryTopic(group, topic string) string { return retryPrefix + group + "_" + topic }

// retryTopicV2 is Java's enableRetryTopicV2 name, which Runnel reads
// handles of but never writes.
func retryTopicV2(group, topic string) string { return retryPrefix + group + "+" + topic }

// RealTopic is the topic a message of the given type was read from, for
// a consumer group that asked for topic. A topic that already is the
// group's retry topic of that type stays as it is: Java's remoting
// clients name the real topic in their acks.
func RealTopic(t TopicType, group, topic string) string {
	switch t {
	case RetryTopicV1:
		if strings.HasPrefix(topic, retryPrefix+group+"_") {
			return topic
		}
		return RetryTopic(group, topic)
	case RetryTopicV2:
		if strings.HasPrefix(topic, retryPrefix+group+"+") {
			return topic
		}
		return retryTopicV2(group, topic)
	}
	return topic
}

// TypeOf is the type of topic read for group: RetryTopicV1 for the
// group's retry topic of another topic, else NormalTopic.
func TypeOf(group, topic string) TopicType {
	if strings.HasPrefix(topic, retryPrefix+group+"_") {
		return RetryTopicV1
	}
	if strings.HasPrefix(topic, retryPrefix+group+"+") {
		return RetryTopicV2
	}
	return NormalTopic
}

// OriginTopic is the topic a consumer asked for, given the topic a
// group's message was read from: the retry topic's origin, or itself.
func OriginTopic(group, realTopic string) string {
	if t, ok := strings.CutPrefix(realTopic, retryPrefix+group+"_"); ok {
		return t
	}
	if t, ok := strings.CutPrefix(realTopic, retryPrefix+group+"+"); ok {
		return t
	}
	return realTopic
}
