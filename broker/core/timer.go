package core

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/runnelmq/runnel/broker/timer"
	"github.com/runnelmq/runnel/message"
)

// timers is the core's timer-message delivery: the service that delivers
// (set by Start; nil before and after a failed Start).
type timers struct {
	svc atomic.Pointer[timer.Service]
}

// startTimer starts delivering due timer messages; Start calls it.
func (c *Core) startTimer() error {
	svc, err := timer.New(timer.Config{
		Store:   scheduleStore{c},
		Deliver: c.deliverScheduled,
		Now:     c.cfg.Now,
		Logger:  c.log,
	})
	if err != nil {
		return fmt.Errorf("core: %w", err)
	}
	if err := svc.Start(); err != nil {
		return fmt.Errorf("core: %w", err)
	}
	c.timer.svc.Store(svc)
	return nil
}

// closeTimer stops the delivery loop before the store closes.
func (c *Core) closeTimer() {
	if svc := c.timer.svc.Load(); svc != nil {
		svc.Close()
	}
}

// timerArrived wakes the timer loop when a message lands in the timer
// topic, so it can aim at an earlier due time.
func (c *Core) timerArrived(topic string) {
	if topic != timer.Topic {
		return
	}
	if svc := c.timer.svc.Load(); svc != nil {
		svc.Notify()
	}
}

// divertTimer moves a message with a timer property due later to the
// timer topic, refusing one due beyond the max delay with Java's answer
// (SendMessageProcessor, WHEEL_TIMER_MSG_ILLEGAL).
func (c *Core) divertTimer(m *message.MessageExt) error {
	maxDelay := c.timerMaxDelay()
	_, err := timer.Transform(m, c.cfg.Now(), maxDelay)
	switch {
	case errors.Is(err, timer.ErrTooLate):
		return errorf(IllegalMessage,
			"timer message illegal, the delay time should not be bigger than the max delay %dms; or if set del msg, the delay time should be bigger than the current time",
			maxDelay.Milliseconds())
	case err != nil:
		return errorf(IllegalMessage, "the message is illegal: %v", err)
	}
	return nil
}

// Timers returns the timer-message service, nil before Start (for tests).
func (c *Core) Timers() *timer.Service { return c.timer.svc.Load() }
