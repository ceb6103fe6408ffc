package due

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/runnelmq/runnel/message"
)

// Recalling a timer message (RocketMQ 5.3's RecallMessageProcessor): a
// send of a timer message is answered with a recall handle naming the
// message's topic, broker, due time and UNIQ_KEY. A recall stores a
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

// ErrBadRecallHandle is returned (wrapped) for a recall handle that does
// not parse.
var ErrBadRecallHandle = errors.New("due: bad recall handle")

// RecallHandle is what a recall handle names (Java RecallMessageHandle's
// version 1).
type RecallHandle struct {
	Topic, Broker string
	// Due is the message's due time, Unix ms, as its TIMER_OUT_MS says.
	Due     int64
	UniqKey string
}

// Encode is the handle as clients carry it: URL-safe base64 (with
// padding, as Java's Base64.getUrlEncoder) of "v1 topic broker due key".
func (h RecallHandle) Encode() string {
	raw := strings.Join([]string{"v1", h.Topic, h.Broker, strconv.FormatInt(h.Due, 10), h.UniqKey}, " ")
	return base64.URLEncoding.EncodeToString([]byte(raw))
}

// DecodeRecallHandle parses a handle Encode made (or Java's broker).
func DecodeRecallHandle(s string) (RecallHandle, error) {
	if s == "" {
		return RecallHandle{}, fmt.Errorf("%w: empty", ErrBadRecallHandle)
	}
	raw, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		return RecallHandle{}, fmt.Errorf("%w: not base64: %v", ErrBadRecallHandle, err)
	}
	f := strings.Split(string(raw), " ")
	if len(f) != 5 || f[0] != "v1" {
		return RecallHandle{}, fmt.Errorf("%w: not a version 1 handle", ErrBadRecallHandle)
	}
	due, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil || due <= 0 || f[1] == "" || f[2] == "" || f[4] == "" {
		return RecallHandle{}, fmt.Errorf("%w: a field is missing or malformed", ErrBadRecallHandle)
	}
	return RecallHandle{Topic: f[1], Broker: f[2], Due: due, UniqKey: f[4]}, nil
}

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
	return RecallHandle{Topic: m.Properties[message.PropertyRealTopic], Broker: broker, Due: due, UniqKey: key}.Encode(), true
}

// RecallMarker returns the properties of the marker that withdraws the
// message h names: sent to h's topic, TransformTimer diverts it to wait
// beside that message.
func RecallMarker(h RecallHandle) map[string]string {
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
