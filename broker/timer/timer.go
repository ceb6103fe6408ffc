// Package timer owns timer messages (RocketMQ 5's TimerMessageStore): a
// message carrying TIMER_DELIVER_MS (an absolute Unix time in ms, what the
// official client's WithDelayTimestamp sets), TIMER_DELAY_SEC or
// TIMER_DELAY_MS (relative to its arrival) waits in the system topic
// rmq_sys_wheel_timer, queue 0, with its real topic and queue in REAL_TOPIC
// and REAL_QID and its due time in TIMER_OUT_MS, and a Service moves it to
// its real queue once that time has come.
//
// Design. The waiting messages are durable as soon as the send is answered:
// they are ordinary records of the timer topic. Which of them are still
// waiting, and when each falls due, is kept in memory only, in a min-heap
// of (due ms, timer-queue offset), 16 bytes a timer (about 40 MB for a
// million, with the second heap below). One goroutine sleeps until the
// heap's earliest due time or until a newly indexed timer is earlier, so a
// million timers far in the future cost no CPU, and each wake costs work in
// proportion to the messages falling due (log n a message), never to all
// those waiting. A Pebble index keyed by due time would avoid the rebuild
// on start, but needs a new kind of store op; the heap needs nothing of the
// store but the checkpoint it already has, and its rebuild is bounded (see
// below), so it was chosen to land first.
//
// Progress is one store checkpoint ("timer"), written after every delivered
// batch: the low watermark (every timer-queue offset below it is
// delivered) and the due time of the last delivered timer (the cursor),
// the cursor only while the index has reached the end of the timer queue
// (a timer not yet indexed may be due before it). Timers are delivered in
// due order, so on start the Service re-reads the timer queue from the
// watermark only, indexChunk entries a Step so what falls due meanwhile
// still goes out, and
//   - drops timers due more than resumeSlack before the cursor: they went
//     out before the crash (a timer is indexed, at most moments after it
//     was stored, before any later due time is delivered);
//   - re-checks timers due from resumeSlack before the cursor up to now,
//     as broker/schedule does: one whose copy (same UNIQ_KEY and queue,
//     stored after it) is already in its real queue was delivered between
//     the delivering append and the checkpoint, and is skipped, each copy
//     matched once;
//   - indexes the rest.
//
// The restart cost is one record read per timer stored since the oldest
// one still waiting, read in log order through the store's Get: measured
// (BenchmarkMillionWaiting, a loaded 2-core machine) 1.8 s for a million
// waiting timers (32 s with a queue and a record lookup per timer). That
// is the price of the heap; a Pebble index would remove it. A timer outlives the store's retention only if its
// delay exceeds FileReservedTime (72 h by default, equal to
// timerMaxDelaySec's default of 3 days): keep timerMaxDelaySec below it.
//
// Invariants: every timer is delivered at or after its due time on the
// injected clock; the one goroutine the Service starts is stopped and
// waited for by Close.
package timer

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/schedule"
	"github.com/runnelmq/runnel/message"
)

// Topic is where timer messages wait (Java TimerMessageStore.TIMER_TOPIC).
const Topic = "rmq_sys_wheel_timer"

// Property names Java 5 reads on a send (MessageConst) that
// remoting/protocol does not define, and the due time stored with a
// waiting timer.
const (
	PropertyTimerDelayMS = "TIMER_DELAY_MS"
	PropertyTimerOutMS   = "TIMER_OUT_MS"
)

// DefaultMaxDelay is Java's MessageStoreConfig.timerMaxDelaySec (3 days).
const DefaultMaxDelay = 3 * 24 * time.Hour

// ErrTooLate is returned (wrapped) by Transform for a timer due beyond the
// maximum delay; ErrBadTime for a timer property that is not a number.
var (
	ErrTooLate = errors.New("timer: delivery time beyond the max delay")
	ErrBadTime = errors.New("timer: bad timer property")
)

// DueTime returns when a message's timer properties ask it to be
// delivered, relative to now for the DELAY ones, and whether it has any
// (Java HookUtils: TIMER_DELAY_SEC first, then TIMER_DELAY_MS, then
// TIMER_DELIVER_MS).
func DueTime(m *message.Message, now time.Time) (int64, bool, error) {
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

// Transform diverts a message with a timer due after now to the timer
// topic (Java HookUtils.transformTimerMessage): the real topic and queue go
// into REAL_TOPIC and REAL_QID, the due time into TIMER_OUT_MS, and the
// message moves to queue 0 of Topic. A timer already due is left alone and
// stored in its real queue at once. It reports whether m was diverted, and
// refuses a timer due more than maxDelay after now with ErrTooLate.
func Transform(m *message.MessageExt, now time.Time, maxDelay time.Duration) (bool, error) {
	due, ok, err := DueTime(&m.Message, now)
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
	m.Topic = Topic
	m.QueueID = 0
	return true, nil
}

// Restore builds the message to deliver from a stored timer message: its
// real topic and queue, the timer properties removed, everything else
// kept (as broker/schedule.Restore).
func Restore(m *message.MessageExt) (*message.MessageExt, error) {
	out, err := schedule.Restore(m)
	if err != nil {
		return nil, err
	}
	delete(out.Properties, PropertyTimerDelayMS)
	delete(out.Properties, PropertyTimerOutMS)
	return out, nil
}

// dueOf returns a stored timer message's due time.
func dueOf(m *message.MessageExt) (int64, error) {
	due, err := strconv.ParseInt(m.Properties[PropertyTimerOutMS], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q at commit log offset %d", ErrBadTime, PropertyTimerOutMS, m.Properties[PropertyTimerOutMS], m.CommitLogOffset)
	}
	return due, nil
}
