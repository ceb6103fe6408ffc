package core

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/message"
)

func sendProps(c *testCore, topic string, props map[string]string) (SendResult, error) {
	return c.Send(SendRequest{Topic: topic, QueueID: 1, MaxReconsumeTimes: -1,
		Messages: []SendMessage{{Properties: props, Body: []byte("body")}}, Client: "test"})
}

// TestSendTimer: a send with a timer property waits in the timer topic
// and is delivered to its queue at its time; a DELAY level wins over a
// timer property, as in Java; a timer beyond the max delay is refused
// with Java's code and remark.
func TestSendTimer(t *testing.T) {
	c := openCore(t, nil)
	send(t, c, "T", "", 0) // create the topic
	if _, err := sendProps(c, "T", map[string]string{message.PropertyTimerDelaySec: "10"}); err != nil {
		t.Fatal(err)
	}
	st := c.Store()
	if st.MaxOffset(due.TimerTopic, 0) != 1 || st.MaxOffset("T", 1) != 0 {
		t.Fatalf("timer topic %d, T/1 %d", st.MaxOffset(due.TimerTopic, 0), st.MaxOffset("T", 1))
	}
	c.clock.Advance(10*time.Second - time.Millisecond)
	if _, err := c.Due().Step(); err != nil || st.MaxOffset("T", 1) != 0 {
		t.Fatalf("before its time: %v, T/1 %d", err, st.MaxOffset("T", 1))
	}
	c.clock.Advance(time.Millisecond)
	if _, err := c.Due().Step(); err != nil || st.MaxOffset("T", 1) != 1 {
		t.Fatalf("at its time: %v, T/1 %d", err, st.MaxOffset("T", 1))
	}

	if _, err := sendProps(c, "T", map[string]string{message.PropertyDelayTimeLevel: "1", message.PropertyTimerDelaySec: "10"}); err != nil {
		t.Fatal(err)
	}
	if st.MaxOffset(due.ScheduleTopic, 0) != 1 || st.MaxOffset(due.TimerTopic, 0) != 1 {
		t.Fatalf("DELAY and TIMER: schedule %d, timer %d", st.MaxOffset(due.ScheduleTopic, 0), st.MaxOffset(due.TimerTopic, 0))
	}

	_, err := sendProps(c, "T", map[string]string{message.PropertyTimerDeliverMS: "soon"})
	var e *Error
	if !errors.As(err, &e) || e.Reason != IllegalMessage {
		t.Fatalf("a bad TIMER_DELIVER_MS: %v", err)
	}
	_, err = sendProps(c, "T", map[string]string{message.PropertyTimerDelaySec: "259201"})
	if !errors.As(err, &e) || e.Reason != IllegalMessage ||
		!strings.HasPrefix(e.Remark, "timer message illegal, the delay time should not be bigger than the max delay 259200000ms") {
		t.Fatalf("a timer beyond 3 days: %v", err)
	}
	if st.MaxOffset(due.TimerTopic, 0) != 1 {
		t.Fatal("a refused timer was stored")
	}
}
