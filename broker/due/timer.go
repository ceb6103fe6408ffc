package due

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/message"
)

// TimerTopic is where timer messages wait (Java
// TimerMessageStore.TIMER_TOPIC), all in queue 0.
const TimerTopic = "rmq_sys_wheel_timer"

// Property names Java 5 reads on a send (MessageConst) that package
// message does not define, and the due time stored with a waiting timer.
const (
	PropertyTimerDelayMS = "TIMER_DELAY_MS"
	PropertyTimerOutMS   = "TIMER_OUT_MS"
)

// DefaultTimerMaxDelay is Java's MessageStoreConfig.timerMaxDelaySec (3
// days).
const DefaultTimerMaxDelay = 3 * 24 * time.Hour

// ErrTooLate is returned (wrapped) by TransformTimer for a timer due
// beyond the maximum delay; ErrBadTime for a timer property that is not a
// number.
var (
	ErrTooLate = errors.New("due: delivery time beyond the max delay")
	ErrBadTime = errors.New("due: bad timer property")
)

// TimerDue returns when a message's timer properties ask it to be
// delivered, relative to now for the DELAY ones, and whether it has any
// (Java HookUtils: TIMER_DELAY_SEC first, then TIMER_DELAY_MS, then
// TIMER_DELIVER_MS).
func TimerDue(m *message.Message, now time.Time) (int64, bool, error) {
	p := m.Properties
	for _, k := range []struct {
		name string
		unit int64
		abs  bool
	}{{message.PropertyTimerDelaySec, 1000, false}, {PropertyTimerDelayMS, 1, false}, {message.PropertyTimerDeliverMS, 1, true}} {
		v, ok := p[k.name]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > (1<<62)/k.unit {
			return 0, true, fmt.Errorf("%w: %s=%q is not a non-negative number", ErrBadTime, k.name, v)
		}
		if k.abs {
			return n, true, nil
		}
		return now.UnixMilli() + n*k.unit, true, nil
	}
	return 0, false, nil
}

// TransformTimer diverts a message with a timer due after now to the
// timer topic (Java HookUtils.transformTimerMessage): the real topic and
// queue go into REAL_TOPIC and REAL_QID, the due time into TIMER_OUT_MS,
// and the message moves to queue 0 of TimerTopic. A timer already due is
// left alone and stored in its real queue at once. It reports whether m
// was diverted, and refuses a timer due more than maxDelay after now with
// ErrTooLate.
func TransformTimer(m *message.MessageExt, now time.Time, maxDelay time.Duration) (bool, error) {
	due, ok, err := TimerDue(&m.Message, now)
	if !ok || err != nil {
		return false, err
	}
	if due-now.UnixMilli() > maxDelay.Milliseconds() {
		return false, fmt.Errorf("%w: due at %d ms, more than %v after %d", ErrTooLate, due, maxDelay, now.UnixMilli())
	}
	if due <= now.UnixMilli() {
		return false, nil
	}
	m.SetProperty(message.PropertyRealTopic, m.Topic)
	m.SetProperty(message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.SetProperty(PropertyTimerOutMS, strconv.FormatInt(due, 10))
	m.Topic = TimerTopic
	m.QueueID = 0
	return true, nil
}

// timerProps are the properties a delivered timer message loses: the
// delay ones (as Restore) and its timer ones.
var timerProps = append(append([]string(nil), delayProps...), PropertyTimerDelayMS, PropertyTimerOutMS)

// RestoreTimer builds the message to deliver from a stored timer message:
// its real topic and queue, the timer properties removed, everything else
// kept (as Restore).
func RestoreTimer(m *message.MessageExt) (*message.MessageExt, error) {
	return restore(m, timerProps)
}

// timerDueOf returns a stored timer message's due time.
func timerDueOf(m *message.MessageExt) (int64, error) {
	due, err := strconv.ParseInt(m.Properties[PropertyTimerOutMS], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q at commit log offset %d", ErrBadTime, PropertyTimerOutMS, m.Properties[PropertyTimerOutMS], m.CommitLogOffset)
	}
	return due, nil
}
