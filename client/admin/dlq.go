package admin

import (
	"fmt"
	"maps"
	"strings"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Dead letters: a consumer group's messages that failed more often than
// its max reconsume times sit in the group's dead-letter topic
// %DLQ%<group>, readable and writable as brokers since RocketMQ 4.7 create
// it. Each is a copy of the original message with the broker's retry
// bookkeeping added (RETRY_TOPIC: the topic it was first sent to;
// ORIGIN_MESSAGE_ID: the original's offsetMsgId; RECONSUME_TIME,
// MAX_RECONSUME_TIMES). These helpers say where a dead letter came from
// and what a re-send to that topic carries; reading and sending are the
// clients' job.

// DLQTopicPrefix starts the name of every consumer group's dead-letter
// topic (Java MixAll.DLQ_GROUP_TOPIC_PREFIX).
const DLQTopicPrefix = "%DLQ%"

// DLQTopic is group's dead-letter topic.
func DLQTopic(group string) string { return DLQTopicPrefix + group }

// resendDropped are the properties a re-sent dead letter leaves behind:
// the retry and dead-letter bookkeeping (it is a new message, not a retry
// of the old one), scheduling (it is due now), the transaction markers (a
// message resent with TRAN_MSG would be stored as an unresolved half
// message), the pull answer's offsets, and UNIQ_KEY, so that the producer
// assigns the copy an id of its own and both stay findable by id.
var resendDropped = []string{
	protocol.PropertyRetryTopic,
	protocol.PropertyOriginMessageID,
	protocol.PropertyRealTopic,
	protocol.PropertyRealQueueID,
	protocol.PropertyReconsumeTime,
	protocol.PropertyMaxReconsumeTimes,
	protocol.PropertyConsumeStartTimestamp,
	protocol.PropertyDelayTimeLevel,
	protocol.PropertyTimerDeliverMS,
	protocol.PropertyTimerDelaySec,
	"TIMER_DELAY_MS",
	"TIMER_OUT_MS",
	"TIMER_ENQUEUE_MS",
	"TIMER_DEQUEUE_MS",
	protocol.PropertyTransactionPrepared,
	protocol.PropertyTranPreparedQueueOffset,
	protocol.PropertyTransactionCheckTimes,
	protocol.PropertyCheckImmunityTimeInSecs,
	protocol.PropertyTransactionID,
	protocol.PropertyProducerGroup,
	protocol.PropertyMinOffset,
	protocol.PropertyMaxOffset,
	protocol.PropertyUniqClientMessageIDKey,
}

// DeadLetterOrigin is the topic a dead letter was first sent to: its
// RETRY_TOPIC property, which the broker sets on the first send-back. An
// error when it is missing (a message someone sent straight to the
// dead-letter topic) or is itself a retry or dead-letter topic.
func DeadLetterOrigin(m *protocol.MessageExt) (string, error) {
	topic := m.Property(protocol.PropertyRetryTopic)
	switch {
	case topic == "":
		return "", fmt.Errorf("%w: dead letter %s has no %s property, so its original topic is unknown",
			ErrBadArgument, m.OffsetMsgID, protocol.PropertyRetryTopic)
	case strings.HasPrefix(topic, "%RETRY%") || strings.HasPrefix(topic, DLQTopicPrefix):
		return "", fmt.Errorf("%w: dead letter %s names %s as its original topic, which is not a user topic",
			ErrBadArgument, m.OffsetMsgID, topic)
	}
	return topic, nil
}

// ResendProperties are the properties a re-send of dead letter m carries:
// all of its own — tags, keys, user properties — but those resendDropped
// lists. The result is a new map.
func ResendProperties(m *protocol.MessageExt) map[string]string {
	props := maps.Clone(m.Properties)
	if props == nil {
		props = map[string]string{}
	}
	for _, k := range resendDropped {
		delete(props, k)
	}
	return props
}
