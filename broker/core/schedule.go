package core

import (
	"fmt"
	"sync/atomic"

	"github.com/runnelmq/runnel/broker/schedule"
	"github.com/runnelmq/runnel/message"
)

// scheduler is the core's delayed delivery: the levels in force (parsed
// from Config.MessageDelayLevel by New) and the service that delivers (set
// by Start; nil before and after a failed Start).
type scheduler struct {
	levels schedule.Levels
	svc    atomic.Pointer[schedule.Service]
}

// delayLevels returns the delay levels in force.
func (c *Core) delayLevels() schedule.Levels { return c.sched.levels }

// startSchedule starts delivering due messages; Start calls it once the store host is known.
func (c *Core) startSchedule() error {
	svc, err := schedule.New(schedule.Config{
		Levels:  c.delayLevels(),
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
	c.sched.svc.Store(svc)
	return nil
}

// closeSchedule stops the delivery loop; Close calls it before the store
// closes, since a delivery writes to the store.
func (c *Core) closeSchedule() {
	if svc := c.sched.svc.Load(); svc != nil {
		svc.Close()
	}
}

// scheduleArrived wakes the delivery loop when a message lands in the
// schedule topic, so it can aim its timer at the new due time.
func (c *Core) scheduleArrived(topic string) {
	if topic != schedule.Topic {
		return
	}
	if svc := c.sched.svc.Load(); svc != nil {
		svc.Notify()
	}
}

// deliverScheduled stores due messages in their real queues, stamped with
// this broker's current address.
func (c *Core) deliverScheduled(msgs []*message.MessageExt) error {
	if h := c.storeHost.Load(); h != nil {
		for _, m := range msgs {
			m.StoreHost = *h
		}
	}
	_, err := c.put(msgs)
	return err
}

// DelayProgress returns, per delay level, the next queue offset of the
// schedule topic still to deliver (for tests and tools).
func (c *Core) DelayProgress() map[int32]int64 {
	if svc := c.sched.svc.Load(); svc != nil {
		return svc.Progress()
	}
	return nil
}
