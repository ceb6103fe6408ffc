package core

import (
	"time"

	"github.com/runnelmq/runnel/broker/due"
	"github.com/runnelmq/runnel/topicconf"
)

// Runtime is the part of the broker's configuration that changes while it
// runs (UPDATE_BROKER_CONFIG, mqadmin updateBrokerConfig). It is read
// whole on every use, so a change is seen at once and never half-made.
type Runtime struct {
	// BrokerPermission (brokerPermission) is the broker's own perm, of
	// topicconf.Perm* bits: without PermRead pulls are refused, without
	// PermWrite sends to ordered topics and send-backs are; the front door
	// registers every topic's perm ANDed with it, so routes steer
	// producers (and consumers) away as in Java.
	BrokerPermission int
	// MaxMessageSize caps a message body.
	MaxMessageSize int
	// TimerMaxDelay is the longest a timer message may wait; zero means
	// due.DefaultTimerMaxDelay.
	TimerMaxDelay time.Duration
}

// Runtime returns the runtime configuration in force.
func (c *Core) Runtime() Runtime { return *c.rt.Load() }

// SetRuntime replaces the runtime configuration; the caller validated it.
// A change of BrokerPermission must be registered by the caller.
func (c *Core) SetRuntime(r Runtime) {
	c.rt.Store(&r)
	c.log.Info("broker: runtime config changed", "brokerPermission", topicconf.PermString(r.BrokerPermission),
		"maxMessageSize", r.MaxMessageSize, "timerMaxDelay", r.TimerMaxDelay)
}

func (c *Core) runtime() *Runtime { return c.rt.Load() }

// timerMaxDelay is the longest a timer may wait now.
func (c *Core) timerMaxDelay() time.Duration {
	if d := c.runtime().TimerMaxDelay; d > 0 {
		return d
	}
	return due.DefaultTimerMaxDelay
}

// brokerIP is the host of the store address, which Java's refusals name
// as the broker's brokerIP1.
func (c *Core) brokerIP() string { return c.host().Addr().String() }

// checkBrokerReadable refuses a pull while the broker's perm has no
// PermRead (PullMessageProcessor).
func (c *Core) checkBrokerReadable() error {
	if !topicconf.IsReadable(c.runtime().BrokerPermission) {
		return errorf(Forbidden, "the broker[%s] pulling message is forbidden", c.brokerIP())
	}
	return nil
}

// checkBrokerWritable refuses a write the broker's perm forbids; Java
// checks it for sends to ordered topics (whose producers pick a queue
// themselves, so routes alone do not steer them) and for send-backs.
func (c *Core) checkBrokerWritable() error {
	if !topicconf.IsWriteable(c.runtime().BrokerPermission) {
		return errorf(Forbidden, "the broker[%s] sending message is forbidden", c.brokerIP())
	}
	return nil
}
