package due

import (
	"strconv"

	"github.com/runnelmq/runnel/message"
)

// Recalling a timer message (RocketMQ 5.3's RecallMessageProcessor): a
// send of a timer message is answered with a recall handle naming the
// message's topic, broker, due time and UNIQ_KEY (message.RecallHandle,
// whose codec clients share). A recall stores a
// marker: a timer message due at the same time, with TIMER_DEL_UNIQKEY
// naming the message to withdraw. The marker is an ordinary record, so
// it is as durable and as replicated as the message it withdraws, and a
// restart re-reads both. When the timer source reads a marker it notes
// the key and due time; the message with that key falling due at that
// time is then skipped, and the marker itself delivers nothing. A recall
// that arrives after the message went out withdraws nothing.

// PropertyTimerDelUniqKey names, on a recall marker, the UNIQ_KEY of the
// timer message it withdraws (Java MessageConst.PROPERTY_TIMER_DEL_UNIQKEY).
const PropertyTimerDelUniqKey = "TIMER_DEL_UNIQKEY"

// RecallTag is a recall marker's tag (Java's _RECALL_TAG_).
const RecallTag = "_RECALL_TAG_"

// RecallHandleOf returns the handle of a stored timer message (one
// TransformTimer diverted), and false for any other message.
func RecallHandleOf(m *message.MessageExt, broker string) (string, bool) {
	if m.Topic != TimerTopic {
		return "", false
	}
	due, err := timerDueOf(m)
	key := m.UniqKey()
	if err != nil || key == "" {
		return "", false
	}
	return message.RecallHandle{Topic: m.Properties[message.PropertyRealTopic], Broker: broker, Due: due, UniqKey: key}.Encode(), true
}

// RecallMarker returns the properties of the marker that withdraws the
// message h names: sent to h's topic, TransformTimer diverts it to wait
// beside that message.
func RecallMarker(h message.RecallHandle) map[string]string {
	return map[string]string{
		PropertyTimerDelUniqKey:                h.UniqKey,
		message.PropertyUniqClientMessageIDKey: h.UniqKey,
		message.PropertyTimerDeliverMS:         strconv.FormatInt(h.Due, 10),
		message.PropertyTags:                   RecallTag,
	}
}

// recallKey is what a marker withdraws: a key falling due at a time.
type recallKey struct {
	due int64
	key string
}
