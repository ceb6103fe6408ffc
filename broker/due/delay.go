package due

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/message"
)

// ScheduleTopic is where delayed messages wait (RocketMQ TopicValidator
// RMQ_SYS_SCHEDULE_TOPIC); level L uses queue L-1.
const ScheduleTopic = "SCHEDULE_TOPIC_XXXX"

// DefaultLevels is RocketMQ's MessageStoreConfig.messageDelayLevel.
const DefaultLevels = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// ErrBadLevels is returned (wrapped) by ParseLevels for a malformed list.
var ErrBadLevels = errors.New("due: bad delay levels")

// ErrNotScheduled is returned (wrapped) by Restore for a stored message
// that lacks a valid REAL_TOPIC or REAL_QID.
var ErrNotScheduled = errors.New("due: not a scheduled message")

// maxLevels bounds the level list: the schedule topic's queue ids are
// level-1 and queue counts are capped at 1024 elsewhere.
const maxLevels = 1024

// Levels are the delays of levels 1..len(Levels).
type Levels []time.Duration

// ParseLevels parses RocketMQ's messageDelayLevel: space-separated
// durations with a unit suffix s, m, h or d ("1s 5s 10s 30s 1m ... 2h").
// Go duration strings ("500ms") are accepted too, so tests can use short
// levels. Every delay must be positive.
func ParseLevels(s string) (Levels, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: empty list", ErrBadLevels)
	}
	if len(fields) > maxLevels {
		return nil, fmt.Errorf("%w: %d levels, at most %d", ErrBadLevels, len(fields), maxLevels)
	}
	out := make(Levels, len(fields))
	for i, f := range fields {
		var d time.Duration
		var err error
		if n, ok := strings.CutSuffix(f, "d"); ok {
			var days int64
			days, err = strconv.ParseInt(n, 10, 32)
			d = time.Duration(days) * 24 * time.Hour
		} else {
			d, err = time.ParseDuration(f)
		}
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: level %d: %q is not a positive duration like 1s, 5m, 2h or 1d", ErrBadLevels, i+1, f)
		}
		out[i] = d
	}
	return out, nil
}

// Max returns the highest level.
func (l Levels) Max() int { return len(l) }

// Clamp maps a requested level to the one used: levels above the maximum
// become the maximum (Java clamps too); 0 and below mean no delay.
func (l Levels) Clamp(level int) int { return min(level, len(l)) }

// Delay returns the delay of level (1-based), 0 for a level out of range.
func (l Levels) Delay(level int) time.Duration {
	if level < 1 || level > len(l) {
		return 0
	}
	return l[level-1]
}

// DelayLevel returns a message's DELAY property as a level, 0 when absent
// or not a positive number.
func DelayLevel(m *message.Message) int {
	s, ok := m.Properties[message.PropertyDelayTimeLevel]
	if !ok {
		return 0 // most sends: and a failed Atoi allocates its error
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// Transform diverts a message with a positive DELAY level to the schedule
// topic (Java HookUtils.transformDelayLevelMessage): the real topic and
// queue go into REAL_TOPIC and REAL_QID, the level is clamped to the
// maximum (and written back to DELAY), and the message moves to queue
// level-1 of ScheduleTopic. It reports whether m was diverted; m's
// properties map is modified in place.
func (l Levels) Transform(m *message.MessageExt) bool {
	level := l.Clamp(DelayLevel(&m.Message))
	if level <= 0 {
		return false
	}
	m.SetProperty(message.PropertyRealTopic, m.Topic)
	m.SetProperty(message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.SetProperty(message.PropertyDelayTimeLevel, strconv.Itoa(level))
	m.Topic = ScheduleTopic
	m.QueueID = int32(level - 1)
	return true
}

// delayProps are the properties a delivered delayed message loses (Java
// messageTimeUp); REAL_TOPIC and REAL_QID stay, as in Java.
var delayProps = []string{message.PropertyDelayTimeLevel, message.PropertyTimerDeliverMS, message.PropertyTimerDelaySec}

// Restore builds the message to deliver from a stored scheduled message
// (Java messageTimeUp): its real topic and queue, the delay properties
// removed, everything else kept. StoreHost is the scheduled copy's; the
// deliverer may replace it.
func Restore(m *message.MessageExt) (*message.MessageExt, error) {
	return restore(m, delayProps)
}

// restore builds the message to deliver from a waiting one (a delayed or
// a timer message): its real topic and queue, the properties drop
// removed, everything else kept; m is not modified.
func restore(m *message.MessageExt, drop []string) (*message.MessageExt, error) {
	topic := m.Properties[message.PropertyRealTopic]
	qid, err := strconv.ParseInt(m.Properties[message.PropertyRealQueueID], 10, 32)
	if topic == "" || err != nil || qid < 0 {
		return nil, fmt.Errorf("%w: REAL_TOPIC %q, REAL_QID %q at commit log offset %d", ErrNotScheduled,
			topic, m.Properties[message.PropertyRealQueueID], m.CommitLogOffset)
	}
	props := maps.Clone(m.Properties)
	for _, p := range drop {
		delete(props, p)
	}
	return &message.MessageExt{
		Message:        message.Message{Topic: topic, Flag: m.Flag, Properties: props, Body: m.Body},
		QueueID:        int32(qid),
		SysFlag:        m.SysFlag,
		BornTimestamp:  m.BornTimestamp,
		BornHost:       m.BornHost,
		StoreHost:      m.StoreHost,
		ReconsumeTimes: m.ReconsumeTimes,
	}, nil
}
