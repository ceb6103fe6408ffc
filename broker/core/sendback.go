package core

import (
	"errors"
	"maps"
	"math/rand/v2"
	"strconv"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// SendBackRequest is a consumer giving back a message it failed to consume.
type SendBackRequest struct {
	Group string
	// Offset is the message's commit log offset.
	Offset            int64
	OriginMsgID       string
	OriginTopic       string
	DelayLevel        int32
	MaxReconsumeTimes int32
	Client            string
}

// SendBack serves a consumer's give-back (Java
// AbstractSendMessageProcessor.consumerSendMsgBack). A copy of the stored
// original goes to %RETRY%<group>, delayed by the requested level or by
// 3 + reconsumeTimes, with its reconsume count raised; once the original
// has been reconsumed maxReconsumeTimes times, or when the client asks
// with a negative level, the copy goes to %DLQ%<group> instead, undelayed.
// Any failure is a SYSTEM_ERROR, and the official client then sends the
// copy itself (see divertSend).
func (c *Core) SendBack(h SendBackRequest) error {
	if err := c.checkBrokerWritable(); err != nil {
		return err
	}
	retryTopic := retryGroupPrefix + h.Group
	if _, err := c.ensureRetryTopic(retryTopic, h.Group, h.Client); err != nil {
		return err
	}
	orig, err := c.lookupSendBack(&h, retryTopic)
	if err != nil {
		return errorf(NoMessage, "look message by offset failed, %d: %v", h.Offset, err)
	}
	return c.giveBack(orig, giveBack{
		group: h.Group, retryTopic: retryTopic, maxTimes: c.maxReconsumeTimes(h.Group, h.MaxReconsumeTimes),
		level: h.DelayLevel, delay: true, toDLQ: h.DelayLevel < 0,
	})
}

// giveBack says where a message that will be consumed again goes.
type giveBack struct {
	group, retryTopic string
	// maxTimes is how often it may be reconsumed before the %DLQ%.
	maxTimes int32
	// delay: the copy waits for delay level level (0: 3 + its reconsume
	// count, as Java picks); otherwise it is visible at once (a POP
	// message whose invisible time already passed).
	delay bool
	level int32
	// toDLQ sends it to the %DLQ% whatever its count.
	toDLQ bool
	// props are set on the copy besides the reconsume bookkeeping.
	props map[string]string
}

// giveBack stores a copy of orig for another attempt (giveBackCopy).
func (c *Core) giveBack(orig *message.MessageExt, g giveBack) error {
	m, err := c.giveBackCopy(orig, g)
	if err != nil {
		return err
	}
	if _, err := c.put([]*message.MessageExt{m}); err != nil {
		return c.putError(err)
	}
	return nil
}

// giveBackCopy makes the copy of orig for another attempt: for
// g.retryTopic (which the caller made sure exists) with its reconsume
// count raised, or, once orig was reconsumed g.maxTimes times (or when
// asked), for the group's %DLQ% (created if missing), undelayed. It is
// what CONSUMER_SEND_MSG_BACK and POP's redelivery share (Java's
// consumerSendMsgBack and PopReviveService's reviveRetry).
func (c *Core) giveBackCopy(orig *message.MessageExt, g giveBack) (*message.MessageExt, error) {
	props := maps.Clone(orig.Properties)
	if props == nil {
		props = map[string]string{}
	}
	if props[message.PropertyRetryTopic] == "" {
		props[message.PropertyRetryTopic] = orig.Topic
	}
	if props[message.PropertyOriginMessageID] == "" {
		props[message.PropertyOriginMessageID] = orig.OffsetMsgID
	}
	times := orig.ReconsumeTimes + 1
	props[message.PropertyReconsumeTime] = strconv.Itoa(int(times))
	props[message.PropertyMaxReconsumeTimes] = strconv.Itoa(int(g.maxTimes))
	delete(props, message.PropertyDelayTimeLevel)
	for k, v := range g.props {
		props[k] = v
	}
	tc, _ := c.topics.get(g.retryTopic)
	m := &message.MessageExt{
		Message:        message.Message{Topic: g.retryTopic, Flag: orig.Flag, Properties: props, Body: orig.Body},
		QueueID:        rand.Int32N(int32(max(tc.WriteQueueNums, 1))),
		SysFlag:        orig.SysFlag,
		BornTimestamp:  orig.BornTimestamp,
		BornHost:       orig.BornHost,
		StoreHost:      c.host(),
		ReconsumeTimes: times,
	}
	if orig.ReconsumeTimes >= g.maxTimes || g.toDLQ {
		dlq, err := c.ensureDLQ(g.group)
		if err != nil {
			return nil, err
		}
		m.Topic, m.QueueID = dlq, 0
	} else if g.delay {
		level := g.level
		if level == 0 {
			level = firstRetryLevel + orig.ReconsumeTimes
		}
		m.SetProperty(message.PropertyDelayTimeLevel, strconv.Itoa(int(level)))
		c.delayLevels().Transform(m)
	}
	return m, nil
}

// ensureRetryTopic creates a group's retry topic when it is missing and
// refuses when it may not be written.
func (c *Core) ensureRetryTopic(retryTopic, group, by string) (topicconf.Config, error) {
	if remark, ok := checkTopicName(retryTopic); !ok {
		return topicconf.Config{}, refuse(InvalidName, remark)
	}
	tc, created, err := c.topics.createIfAbsent(newTopic(retryTopic, c.retryQueues(group), defaultTopicPerm))
	if err != nil {
		return topicconf.Config{}, errorf(Internal, "topic[%s] not exist: %v", retryTopic, err)
	}
	if created {
		c.log.Info("broker: retry topic created", "topic", retryTopic, "consumer", by)
		c.cfg.TopicsChanged(false)
	}
	if !topicconf.IsWriteable(tc.Perm) {
		return topicconf.Config{}, errorf(Forbidden, "the topic[%s] sending message is forbidden", retryTopic)
	}
	return tc, nil
}

// errNoOriginal is wrapped when send-back finds no stored original.
var errNoOriginal = errors.New("core: original message not found")

// lookupSendBack finds the original of a send-back: the record at the
// header's commit log offset, unless that record is not the message the
// client names by originMsgId; then the message named by originMsgId, as
// an offsetMsgId or as a UNIQ_KEY (latest copy in the real or the retry
// topic).
func (c *Core) lookupSendBack(h *SendBackRequest, retryTopic string) (*message.MessageExt, error) {
	if rec, err := c.store().ReadRecord(h.Offset); err == nil {
		m, _, err := message.DecodeStoredMessage(rec, false)
		if err == nil && (h.OriginMsgID == "" || h.OriginMsgID == m.MsgID || h.OriginMsgID == m.OffsetMsgID) {
			return m, nil
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if h.OriginMsgID == "" {
		return nil, errNoOriginal
	}
	if _, phys, err := message.ParseOffsetMsgID(h.OriginMsgID); err == nil {
		if rec, err := c.store().ReadRecord(phys); err == nil {
			if m, _, err := message.DecodeStoredMessage(rec, false); err == nil {
				return m, nil
			}
		}
	}
	for _, topic := range []string{retryTopic, h.OriginTopic} {
		if topic == "" {
			continue
		}
		recs, err := c.store().QueryByUniqKey(topic, h.OriginMsgID, maxQueryNum)
		if err != nil {
			return nil, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if m, _, err := message.DecodeStoredMessage(recs[i], false); err == nil {
				return m, nil
			}
		}
	}
	return nil, errNoOriginal
}
