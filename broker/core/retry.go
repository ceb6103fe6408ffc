package core

import (
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// dlqQueueNums is the queue count of a %DLQ% topic (MixAll.DLQ_NUMS_PER_GROUP).
const dlqQueueNums = 1

// dlqTopicPerm is the perm a %DLQ% topic is created with: readable and
// writable, as RocketMQ 4.7 and later and all of 5.x create it, so users
// re-consume dead letters (before 4.7 it was write-only).
const dlqTopicPerm = topicconf.PermRead | topicconf.PermWrite

// firstRetryLevel is added to the reconsume count to pick the delay level
// of a retry when the client leaves it to the broker (level 3 is 10 s with
// the default levels).
const firstRetryLevel = 3

// divertSend applies, to the single message of a send about to be
// stored, the two rewrites Java's send path makes before the store: a send
// to a %RETRY% topic (the official client's fallback when
// CONSUMER_SEND_MSG_BACK fails) gets its reconsume bookkeeping and goes to
// the group's %DLQ% once the reconsume count exceeds the maximum
// (SendMessageProcessor.handleRetryAndDLQ); then a message with a DELAY
// level waits in the schedule topic (HookUtils.handleScheduleMessage), and
// one with a timer property in the timer topic (transformTimerMessage).
// Batches are not diverted (Send refuses DELAY and %RETRY% in batches).
func (c *Core) divertSend(r *SendRequest, m *message.MessageExt) error {
	if group, ok := strings.CutPrefix(m.Topic, retryGroupPrefix); ok {
		maxTimes := c.maxReconsumeTimes(group, r.MaxReconsumeTimes) // absent: the group's, as Java
		m.SetProperty(message.PropertyReconsumeTime, strconv.Itoa(int(m.ReconsumeTimes)))
		m.SetProperty(message.PropertyMaxReconsumeTimes, strconv.Itoa(int(maxTimes)))
		if m.ReconsumeTimes > maxTimes {
			dlq, err := c.ensureDLQ(group)
			if err != nil {
				return err
			}
			m.Topic, m.QueueID = dlq, 0
			delete(m.Properties, message.PropertyDelayTimeLevel)
			return nil
		}
	}
	if schedulable(m.SysFlag) && !c.delayLevels().Transform(m) {
		return c.divertTimer(m) // due.go: TIMER_* -> timer topic; a DELAY level wins, as in Java
	}
	return nil
}

// schedulable reports whether a message of this sysFlag may be delayed:
// not a transaction's prepared or rollback half (Java delays only
// TRANSACTION_NOT_TYPE and TRANSACTION_COMMIT_TYPE).
func schedulable(sysFlag int32) bool {
	t := sysFlag & message.SysFlagTransactionMask
	return t == message.SysFlagTransactionNot || t == message.SysFlagTransactionComm
}

// ensureDLQ creates the group's dead-letter topic when it is missing
// (TopicConfigManager.createTopicInSendMessageBackMethod) and has it
// registered with the name servers. It returns the topic name.
func (c *Core) ensureDLQ(group string) (string, error) {
	name := dlqGroupPrefix + group
	if remark, ok := checkTopicName(name); !ok {
		return "", refuse(InvalidName, remark)
	}
	tc, created, err := c.topics.createIfAbsent(newTopic(name, dlqQueueNums, dlqTopicPerm))
	if err != nil {
		return "", errorf(Internal, "topic[%s] not exist: %v", name, err)
	}
	if created {
		c.log.Info("broker: dead-letter topic created", "topic", name)
		c.cfg.TopicsChanged(false)
	}
	if !topicconf.IsWriteable(tc.Perm) {
		return "", errorf(Forbidden, "the topic[%s] sending message is forbidden", name)
	}
	return name, nil
}
