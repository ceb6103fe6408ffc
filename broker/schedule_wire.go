package broker

import (
	"fmt"
	"sync/atomic"

	"github.com/runnelmq/runnel/broker/schedule"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// scheduler is the broker's delayed delivery: the levels in force (parsed
// from Config.MessageDelayLevel by New) and the service that delivers (set
// by Start; nil before and after a failed Start).
type scheduler struct {
	levels schedule.Levels
	svc    atomic.Pointer[schedule.Service]
}

// delayLevels returns the delay levels in force.
func (b *Broker) delayLevels() schedule.Levels { return b.sched.levels }

// startSchedule starts delivering due messages; Start calls it once the store host is known.
func (b *Broker) startSchedule() error {
	svc, err := schedule.New(schedule.Config{
		Levels:  b.delayLevels(),
		Store:   b.st,
		Deliver: b.deliverScheduled,
		Now:     b.cfg.Now,
		Logger:  b.log,
	})
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if err := svc.Start(); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	b.sched.svc.Store(svc)
	return nil
}

// closeSchedule stops the delivery loop; Close calls it before the store
// closes, since a delivery writes to the store.
func (b *Broker) closeSchedule() {
	if svc := b.sched.svc.Load(); svc != nil {
		svc.Close()
	}
}

// scheduleArrived wakes the delivery loop when a message lands in the
// schedule topic, so it can aim its timer at the new due time.
func (b *Broker) scheduleArrived(topic string) {
	if topic != schedule.Topic {
		return
	}
	if svc := b.sched.svc.Load(); svc != nil {
		svc.Notify()
	}
}

// deliverScheduled stores due messages in their real queues, stamped with
// this broker's current address.
func (b *Broker) deliverScheduled(msgs []*protocol.MessageExt) error {
	if h := b.storeHost.Load(); h != nil {
		for _, m := range msgs {
			m.StoreHost = *h
		}
	}
	_, err := b.st.Put(msgs)
	return err
}

// DelayProgress returns, per delay level, the next queue offset of the
// schedule topic still to deliver (for tests and tools).
func (b *Broker) DelayProgress() map[int32]int64 {
	if svc := b.sched.svc.Load(); svc != nil {
		return svc.Progress()
	}
	return nil
}

// defaultMessageDelayLevel is Config.MessageDelayLevel's default.
const defaultMessageDelayLevel = schedule.DefaultLevels

// validDelayLevels checks Config.MessageDelayLevel.
func validDelayLevels(s string) error {
	if _, err := schedule.ParseLevels(s); err != nil {
		return fmt.Errorf("%w: MessageDelayLevel: %w", ErrBadConfig, err)
	}
	return nil
}
