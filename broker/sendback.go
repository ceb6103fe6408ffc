package broker

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"strconv"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// handleConsumerSendMsgBack serves CONSUMER_SEND_MSG_BACK (36): a consumer
// gives back a message it failed to consume (Java
// AbstractSendMessageProcessor.consumerSendMsgBack). A copy of the stored
// original goes to %RETRY%<group>, delayed by the requested level or by
// 3 + reconsumeTimes, with its reconsume count raised; once the original
// has been reconsumed maxReconsumeTimes times, or when the client asks
// with a negative level, the copy goes to %DLQ%<group> instead, undelayed.
// Any failure answers SYSTEM_ERROR, and the official client then sends
// the copy itself (see divertSend).
func (b *Broker) handleConsumerSendMsgBack(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.ConsumerSendMsgBackRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	retryTopic := retryGroupPrefix + h.Group
	if remark, ok := checkTopicName(retryTopic); !ok {
		return protocol.NewResponse(req, protocol.RespSystemError, remark)
	}
	tc, created, err := b.topics.createIfAbsent(newTopic(retryTopic, retryQueueNums, defaultTopicPerm))
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "topic[%s] not exist: %v", retryTopic, err)
	}
	if created {
		b.log.Info("broker: retry topic created by send-back", "topic", retryTopic, "consumer", c.RemoteAddr())
		b.kickRegister()
	}
	if !protocol.IsWriteable(tc.Perm) {
		return errResponse(req, protocol.RespNoPermission, "the topic[%s] sending message is forbidden", retryTopic)
	}
	orig, err := b.lookupSendBack(&h, retryTopic)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "look message by offset failed, %d: %v", h.Offset, err)
	}

	props := maps.Clone(orig.Properties)
	if props == nil {
		props = map[string]string{}
	}
	if props[protocol.PropertyRetryTopic] == "" {
		props[protocol.PropertyRetryTopic] = orig.Topic
	}
	if props[protocol.PropertyOriginMessageID] == "" {
		props[protocol.PropertyOriginMessageID] = orig.OffsetMsgID
	}
	maxTimes := h.MaxReconsumeTimes
	if maxTimes < 0 {
		maxTimes = defaultMaxReconsumeTimes
	}
	times := orig.ReconsumeTimes + 1
	props[protocol.PropertyReconsumeTime] = strconv.Itoa(int(times))
	props[protocol.PropertyMaxReconsumeTimes] = strconv.Itoa(int(maxTimes))
	delete(props, protocol.PropertyDelayTimeLevel)

	m := &protocol.MessageExt{
		Message:        protocol.Message{Topic: retryTopic, Flag: orig.Flag, Properties: props, Body: orig.Body},
		QueueID:        rand.Int32N(int32(max(tc.WriteQueueNums, 1))),
		SysFlag:        orig.SysFlag,
		BornTimestamp:  orig.BornTimestamp,
		BornHost:       orig.BornHost,
		StoreHost:      *b.storeHost.Load(),
		ReconsumeTimes: times,
	}
	if level := h.DelayLevel; orig.ReconsumeTimes >= maxTimes || level < 0 {
		dlq, resp := b.ensureDLQ(req, h.Group)
		if resp != nil {
			return resp
		}
		m.Topic, m.QueueID = dlq, 0
	} else {
		if level == 0 {
			level = firstRetryLevel + orig.ReconsumeTimes
		}
		m.SetProperty(protocol.PropertyDelayTimeLevel, strconv.Itoa(int(level)))
		b.delayLevels().Transform(m)
	}
	if _, err := b.st.Put([]*protocol.MessageExt{m}); err != nil {
		return b.putError(req, err)
	}
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// errNoOriginal is wrapped when send-back finds no stored original.
var errNoOriginal = errors.New("broker: original message not found")

// lookupSendBack finds the original of a send-back: the record at the
// header's commit log offset, unless that record is not the message the
// client names by originMsgId; then the message named by originMsgId, as
// an offsetMsgId or as a UNIQ_KEY (latest copy in the real or the retry
// topic).
func (b *Broker) lookupSendBack(h *protocol.ConsumerSendMsgBackRequestHeader, retryTopic string) (*protocol.MessageExt, error) {
	if rec, err := b.st.ReadRecord(h.Offset); err == nil {
		m, _, err := protocol.DecodeStoredMessage(rec, false)
		if err == nil && (h.OriginMsgID == "" || h.OriginMsgID == m.MsgID || h.OriginMsgID == m.OffsetMsgID) {
			return m, nil
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if h.OriginMsgID == "" {
		return nil, errNoOriginal
	}
	if _, phys, err := protocol.ParseOffsetMsgID(h.OriginMsgID); err == nil {
		if rec, err := b.st.ReadRecord(phys); err == nil {
			if m, _, err := protocol.DecodeStoredMessage(rec, false); err == nil {
				return m, nil
			}
		}
	}
	for _, topic := range []string{retryTopic, h.OriginTopic} {
		if topic == "" {
			continue
		}
		recs, err := b.st.QueryByUniqKey(topic, h.OriginMsgID, maxQueryNum)
		if err != nil {
			return nil, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if m, _, err := protocol.DecodeStoredMessage(recs[i], false); err == nil {
				return m, nil
			}
		}
	}
	return nil, errNoOriginal
}
