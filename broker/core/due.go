package core

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// deliverLater is the core's "deliver later" (package due): the delay
// levels in force (Config.DelayLevels) and, while this core is a master,
// the one service delivering delayed and timer messages and bringing back
// POP messages not acknowledged in time (pop_revive.go), with its delay
// source (set by startDue; nil before and after, and after a failed
// start).
type deliverLater struct {
	levels due.Levels
	svc    atomic.Pointer[due.Service]
	delay  atomic.Pointer[due.QueueSource]
}

// delayLevels returns the delay levels in force.
func (c *Core) delayLevels() due.Levels { return c.later.levels }

// startDue starts delivering due delayed and timer messages, resuming
// from the progress in the store; Start and Promote call it.
func (c *Core) startDue() error {
	st := dueStore{c}
	delay := due.NewDelaySource(st, c.delayLevels(), c.log)
	svc, err := due.New(due.Config{
		Store:   st,
		Sources: []due.Source{delay, due.NewTimerSource(st, c.log), newPopSource(c)},
		Deliver: c.deliverDue,
		Now:     c.cfg.Now,
		Logger:  c.log,
	})
	if err != nil {
		return fmt.Errorf("core: %w", err)
	}
	if err := svc.Start(); err != nil {
		return fmt.Errorf("core: %w", err)
	}
	c.later.delay.Store(delay)
	c.later.svc.Store(svc)
	return nil
}

// closeDue stops the delivery loop; it runs before the store closes,
// since a delivery writes to the store.
func (c *Core) closeDue() {
	if svc := c.later.svc.Load(); svc != nil {
		svc.Close()
	}
	c.inflight.Unfollow()
}

// dueArrived wakes the delivery loop when a message lands in the
// schedule or the timer topic, so it can aim its timer at the new due
// time.
func (c *Core) dueArrived(topic string) {
	if topic != due.ScheduleTopic && topic != due.TimerTopic {
		return
	}
	if svc := c.later.svc.Load(); svc != nil {
		svc.Notify()
	}
}

// deliverDue stores due messages in their real queues, stamped with this
// broker's current address.
func (c *Core) deliverDue(msgs []*message.MessageExt) error {
	if h := c.storeHost.Load(); h != nil {
		for _, m := range msgs {
			m.StoreHost = *h
		}
	}
	_, err := c.put(msgs)
	return err
}

// divertTimer moves a message with a timer property due later to the
// timer topic, refusing one due beyond the max delay with Java's answer
// (SendMessageProcessor, WHEEL_TIMER_MSG_ILLEGAL).
func (c *Core) divertTimer(m *message.MessageExt) error {
	maxDelay := c.timerMaxDelay()
	_, err := due.TransformTimer(m, c.cfg.Now(), maxDelay)
	switch {
	case errors.Is(err, due.ErrTooLate):
		return errorf(IllegalMessage,
			"timer message illegal, the delay time should not be bigger than the max delay %dms; or if set del msg, the delay time should be bigger than the current time",
			maxDelay.Milliseconds())
	case err != nil:
		return errorf(IllegalMessage, "the message is illegal: %v", err)
	}
	return nil
}

// DelayProgress returns, per delay level, the next queue offset of the
// schedule topic still to deliver (for tests and tools).
func (c *Core) DelayProgress() map[int32]int64 {
	d := c.later.delay.Load()
	if d == nil {
		return nil
	}
	next := d.Next()
	out := make(map[int32]int64, len(next))
	for q, off := range next {
		out[q+1] = off
	}
	return out
}

// Due returns the delayed- and timer-delivery service, nil before Start
// (for tests).
func (c *Core) Due() *due.Service { return c.later.svc.Load() }

// dueStore is what package due reads and writes: reads go to the current
// store, the progress write through the backend, so a replicated group's
// new master resumes where the old one stopped.
type dueStore struct{ c *Core }

func (s dueStore) MinOffset(topic string, q int32) int64 { return s.c.store().MinOffset(topic, q) }
func (s dueStore) MaxOffset(topic string, q int32) int64 { return s.c.store().MaxOffset(topic, q) }
func (s dueStore) QueueEntry(topic string, q int32, off int64) (consumequeue.Entry, error) {
	return s.c.store().QueueEntry(topic, q, off)
}
func (s dueStore) ReadRecord(phys int64) ([]byte, error) { return s.c.store().ReadRecord(phys) }
func (s dueStore) QueryByUniqKey(topic, key string, n int) ([][]byte, error) {
	return s.c.store().QueryByUniqKey(topic, key, n)
}
func (s dueStore) Get(topic string, q int32, off int64, maxMsgs, maxBytes int, f store.Filter) (*store.GetResult, error) {
	return s.c.store().Get(topic, q, off, maxMsgs, maxBytes, f)
}
func (s dueStore) DelayOffsets() (map[int32]int64, error) { return s.c.store().DelayOffsets() }
func (s dueStore) Checkpoint(name string) ([]byte, bool, error) {
	return s.c.store().Checkpoint(name)
}
func (s dueStore) PutCheckpoint(name string, v []byte) error {
	return s.c.apply(&store.Op{Kind: store.OpPutCheckpoint, Name: name, Value: v})
}
