// Package consumercall owns the admin calls a broker forwards to a
// connected consumer and answers with the consumer's reply (Java
// AdminBrokerProcessor.callConsumer and Broker2Client.getConsumeStatus):
// GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY and
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS. The broker's core wires it
// (broker/core/consumer_calls.go) with its consumer registry and turns its
// errors into RocketMQ refusals; this package never sees a wire
// (internal/lint).
//
// Invariants: no call holds a goroutine while a client thinks (a
// Consumer's call takes a done function); every answer func runs exactly
// once, with the client's reply or an error, within Config.Timeout, and
// at once when Config.Context ends.
package consumercall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Reply is a client's answer to a forwarded admin call, passed back to
// the admin as it came. OK says the client answered success; Status is
// the answer's status in the protocol of the door whose channel made the
// call (a RocketMQ response code over remoting), which only that door
// reads.
type Reply struct {
	OK     bool
	Status int32
	Remark string
	Ext    map[string]string
	Body   []byte
}

// Direct names a message for a consumer to consume directly.
type Direct struct {
	Group, ClientID, MsgID, Topic string
	BrokerName                    string
	// TopicSysFlag is the topic's, when Topic is known; -1 otherwise.
	TopicSysFlag int
}

// Consumer is a connected consumer as the calls reach it.
type Consumer interface {
	// Closed reports whether the connection is gone.
	Closed() bool
	// ConsumerRunningInfo asks the consumer for its running info.
	ConsumerRunningInfo(ctx context.Context, group, clientID string, jstack bool, done func(Reply, error)) error
	// ConsumeMessageDirectly has the consumer run its listener on msg (a
	// stored record).
	ConsumeMessageDirectly(ctx context.Context, r Direct, msg []byte, done func(Reply, error)) error
	// ConsumerStatus asks the consumer for its offsets of a topic; table is
	// its raw messageQueueTable.
	ConsumerStatus(ctx context.Context, topic, group string, done func(table []byte, err error)) error
}

// Member is one registered client of a consumer group; Consumer is nil
// when the client came through a front door that cannot be called.
type Member struct {
	ClientID string
	Consumer Consumer
}

// Config wires a Caller.
type Config struct {
	// Members lists a group's registered clients. Required.
	Members func(group string) []Member
	// Timeout bounds every call to a client. Required.
	Timeout time.Duration
	// Context bounds every call too (the broker's life). Default:
	// context.Background().
	Context context.Context
	// Logger. Default: discard.
	Logger *slog.Logger
}

// ErrNotOnline is the error (wrapped) of a call to a client that is not a
// live member of its group.
var ErrNotOnline = errors.New("consumercall: consumer not online")

// ErrNoConsumers is the error (wrapped) of a status call to a group no
// client is registered in.
var ErrNoConsumers = errors.New("consumercall: no consumer online in the group")

// Caller forwards calls to consumers.
type Caller struct{ cfg Config }

// New returns a Caller over cfg.
func New(cfg Config) *Caller {
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Caller{cfg: cfg}
}

// find returns the live consumer clientID of group.
func (c *Caller) find(group, clientID string) (Consumer, bool) {
	for _, m := range c.cfg.Members(group) {
		if m.ClientID == clientID && m.Consumer != nil && !m.Consumer.Closed() {
			return m.Consumer, true
		}
	}
	return nil, false
}

// call runs fn against clientID of group within the timeout and passes
// the outcome to answer: the client's reply, the call's error (a client
// that did not answer in time: its Consumer's timeout error, or
// context.DeadlineExceeded), or ErrNotOnline.
func (c *Caller) call(group, clientID string, answer func(Reply, error),
	fn func(ctx context.Context, to Consumer, done func(Reply, error)) error) {
	to, ok := c.find(group, clientID)
	if !ok {
		answer(Reply{}, fmt.Errorf("%w: <%s> <%s>", ErrNotOnline, group, clientID))
		return
	}
	ctx, cancel := context.WithTimeout(c.cfg.Context, c.cfg.Timeout)
	done := func(r Reply, err error) {
		cancel()
		answer(r, err)
	}
	if err := fn(ctx, to, done); err != nil {
		done(Reply{}, err)
	}
}

// RunningInfo asks a consumer for its running info; answer gets its reply
// as it came.
func (c *Caller) RunningInfo(group, clientID string, jstack bool, answer func(Reply, error)) {
	c.call(group, clientID, answer, func(ctx context.Context, to Consumer, done func(Reply, error)) error {
		return to.ConsumerRunningInfo(ctx, group, clientID, jstack, done)
	})
}

// ConsumeDirectly has consumer r.ClientID of r.Group run its listener on
// msg, a stored record.
func (c *Caller) ConsumeDirectly(r Direct, msg []byte, answer func(Reply, error)) {
	c.call(r.Group, r.ClientID, answer, func(ctx context.Context, to Consumer, done func(Reply, error)) error {
		return to.ConsumeMessageDirectly(ctx, r, msg, done)
	})
}

// Status asks every member of group that can be called (or only the one
// whose client id is only, when given) for its in-memory offsets of topic,
// all at once (Java Broker2Client.getConsumeStatus), and answers with each
// client's raw table by client id. A client that fails or does not answer
// in time is left out, as in Java. A group without members is
// ErrNoConsumers.
func (c *Caller) Status(topic, group, only string, answer func(map[string][]byte, error)) {
	members := c.cfg.Members(group)
	if len(members) == 0 {
		answer(nil, fmt.Errorf("%w: [%s]", ErrNoConsumers, group))
		return
	}
	var targets []Member
	for _, m := range members {
		if m.Consumer != nil && (only == "" || only == m.ClientID) {
			targets = append(targets, m)
		}
	}
	if len(targets) == 0 {
		answer(map[string][]byte{}, nil)
		return
	}
	ctx, cancel := context.WithTimeout(c.cfg.Context, c.cfg.Timeout)
	finish := func(tables map[string][]byte) {
		cancel()
		answer(tables, nil)
	}
	var mu sync.Mutex
	tables := map[string][]byte{}
	pending := len(targets)
	for _, t := range targets {
		done := func(table []byte, err error) {
			if err != nil {
				c.cfg.Logger.Debug("broker: consumer status not answered", "group", group, "client", t.ClientID, "err", err)
			}
			mu.Lock()
			if err == nil && table != nil {
				tables[t.ClientID] = table
			}
			pending--
			last := pending == 0
			mu.Unlock()
			if last {
				finish(tables)
			}
		}
		if err := t.Consumer.ConsumerStatus(ctx, topic, group, done); err != nil {
			done(nil, err)
		}
	}
}
