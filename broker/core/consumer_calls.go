package core

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// Admin requests answered by asking a connected consumer (Java
// AdminBrokerProcessor.callConsumer and Broker2Client.getConsumeStatus).
// None holds a goroutine while the client thinks: the Channel's call takes
// a done function, and answer runs exactly once — with the client's reply,
// or with Java's refusal when the client is not online, fails, or does not
// answer within ConsumerCallTimeout (bounded by the core's life too).

// findConsumer returns the open channel of clientID in group.
func (c *Core) findConsumer(group, clientID string) (Channel, bool) {
	for _, entry := range c.clients.Channels(group) {
		if entry.ClientID != clientID {
			continue
		}
		if ch, ok := channelOf(entry); ok && !ch.Closed() {
			return ch, true
		}
	}
	return nil, false
}

// callConsumer runs call against clientID of group with the call timeout
// and passes the outcome to answer, mapped to Java's refusals.
func (c *Core) callConsumer(group, clientID string, answer func(ClientReply, error),
	call func(ctx context.Context, ch Channel, done func(ClientReply, error)) error) {
	ch, ok := c.findConsumer(group, clientID)
	if !ok {
		answer(ClientReply{}, errorf(protocol.RespSystemError, "The Consumer <%s> <%s> not online", group, clientID))
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConsumerCallTimeout)
	done := func(r ClientReply, err error) {
		cancel()
		answer(r, consumerCallError(group, clientID, err))
	}
	if err := call(ctx, ch, done); err != nil {
		done(ClientReply{}, err)
	}
}

// consumerCallError maps a failed call to the refusal the admin gets.
func consumerCallError(group, clientID string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrClientTimeout) || errors.Is(err, context.DeadlineExceeded):
		return errorf(protocol.RespConsumeMsgTimeout, "consumer <%s> <%s> Timeout: %v", group, clientID, err)
	default:
		return errorf(protocol.RespSystemError, "invoke consumer <%s> <%s> Exception: %v", group, clientID, err)
	}
}

// ConsumerRunningInfo asks a consumer for its running info; answer gets
// its reply as it came.
func (c *Core) ConsumerRunningInfo(group, clientID string, jstack bool, answer func(ClientReply, error)) {
	c.callConsumer(group, clientID, answer, func(ctx context.Context, ch Channel, done func(ClientReply, error)) error {
		return ch.ConsumerRunningInfo(ctx, group, clientID, jstack, done)
	})
}

// ConsumeMessageDirectly has a consumer run its listener on a stored
// message, named by its offsetMsgId. Java does not check that the id's
// store host is this broker (the tools send the request to that host), and
// neither does this.
func (c *Core) ConsumeMessageDirectly(r DirectConsume, answer func(ClientReply, error)) {
	if r.Group == "" {
		answer(ClientReply{}, refuse(protocol.RespSystemError, "protocol: CONSUME_MESSAGE_DIRECTLY header: consumerGroup: missing"))
		return
	}
	rec, err := c.store().LookupMessageID(r.MsgID)
	switch {
	case errors.Is(err, protocol.ErrBadMessageID):
		err = errorf(protocol.RespSystemError, "consume message directly: bad message id %q: %v", r.MsgID, err)
	case errors.Is(err, store.ErrNotFound):
		err = errorf(protocol.RespSystemError, "consume message directly: no message with id %s in broker %s", r.MsgID, c.cfg.BrokerName)
	case err != nil:
		err = errorf(protocol.RespSystemError, "consume message directly: read message %s: %v", r.MsgID, err)
	}
	if err != nil {
		answer(ClientReply{}, err)
		return
	}
	r.BrokerName = c.cfg.BrokerName
	r.TopicSysFlag = -1
	if tc, ok := c.topics.get(r.Topic); ok && r.Topic != "" {
		r.TopicSysFlag = tc.TopicSysFlag
	}
	c.callConsumer(r.Group, r.ClientID, answer, func(ctx context.Context, ch Channel, done func(ClientReply, error)) error {
		return ch.ConsumeMessageDirectly(ctx, r, rec, done)
	})
}

// ConsumerStatus asks every online consumer of group (or only the one
// whose client id is only, when given) for its in-memory offsets of
// topic, all at once (Java Broker2Client.getConsumeStatus), and answers
// with each client's raw table by client id. A client that fails or does
// not answer in time is left out, as in Java.
func (c *Core) ConsumerStatus(topic, group, only string, answer func(map[string][]byte, error)) {
	if topic == "" || group == "" {
		answer(nil, refuse(protocol.RespSystemError, "protocol: INVOKE_BROKER_TO_GET_CONSUMER_STATUS header: topic and group are required"))
		return
	}
	entries := c.clients.Channels(group)
	if len(entries) == 0 {
		answer(nil, errorf(protocol.RespSystemError, "No Any Consumer online in the consumer group: [%s]", group))
		return
	}
	type target struct {
		id string
		ch Channel
	}
	var targets []target
	for _, e := range entries {
		if ch, ok := channelOf(e); ok && (only == "" || only == e.ClientID) {
			targets = append(targets, target{e.ClientID, ch})
		}
	}
	if len(targets) == 0 {
		answer(map[string][]byte{}, nil)
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.ConsumerCallTimeout)
	var mu sync.Mutex
	finish := func(tables map[string][]byte) {
		cancel()
		answer(tables, nil)
	}
	tables := map[string][]byte{}
	pending := len(targets)
	for _, t := range targets {
		done := func(table []byte, err error) {
			if err != nil {
				c.log.Debug("broker: consumer status not answered", "group", group, "client", t.id, "err", err)
			}
			mu.Lock()
			if err == nil && table != nil {
				tables[t.id] = table
			}
			pending--
			last := pending == 0
			mu.Unlock()
			if last {
				finish(tables)
			}
		}
		if err := t.ch.ConsumerStatus(ctx, topic, group, done); err != nil {
			done(nil, err)
		}
	}
}

// SortedClientIDs returns the keys of a ConsumerStatus answer in order.
func SortedClientIDs(tables map[string][]byte) []string { return slices.Sorted(maps.Keys(tables)) }
