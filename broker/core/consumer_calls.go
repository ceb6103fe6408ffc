package core

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/runnelmq/runnel/broker/consumercall"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// Admin requests answered by asking a connected consumer: package
// broker/consumercall forwards them (one answer per call, within
// ConsumerCallTimeout, bounded by the core's life, no goroutine held while
// the client thinks); the core wires it to its consumer registry, checks
// what it knows (the message of CONSUME_MESSAGE_DIRECTLY) and turns the
// outcome into Java's refusals.

// ClientReply is a client's answer to a forwarded call (consumercall.Reply).
type ClientReply = consumercall.Reply

// DirectConsume names a message for a consumer to consume directly
// (consumercall.Direct).
type DirectConsume = consumercall.Direct

// newConsumerCalls wires the forwarding over the consumer registry; Open
// calls it.
func (c *Core) newConsumerCalls() *consumercall.Caller {
	return consumercall.New(consumercall.Config{
		Members: func(group string) []consumercall.Member {
			entries := c.clients.Channels(group)
			out := make([]consumercall.Member, len(entries))
			for i, e := range entries {
				out[i].ClientID = e.ClientID
				if e.Conn != nil {
					out[i].Consumer = e.Conn
				}
			}
			return out
		},
		Timeout: c.cfg.ConsumerCallTimeout,
		Context: c.ctx,
		Logger:  c.log,
	})
}

// consumerCallError maps a failed call to the refusal the admin gets.
func consumerCallError(group, clientID string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, consumercall.ErrNotOnline):
		return errorf(NoClient, "The Consumer <%s> <%s> not online", group, clientID)
	case errors.Is(err, ErrClientTimeout) || errors.Is(err, context.DeadlineExceeded):
		return errorf(ClientTimeout, "consumer <%s> <%s> Timeout: %v", group, clientID, err)
	default:
		return errorf(Internal, "invoke consumer <%s> <%s> Exception: %v", group, clientID, err)
	}
}

// ConsumerRunningInfo asks a consumer for its running info; answer gets
// its reply as it came.
func (c *Core) ConsumerRunningInfo(group, clientID string, jstack bool, answer func(ClientReply, error)) {
	c.calls.RunningInfo(group, clientID, jstack, func(r ClientReply, err error) {
		answer(r, consumerCallError(group, clientID, err))
	})
}

// ConsumeMessageDirectly has a consumer run its listener on a stored
// message, named by its offsetMsgId. Java does not check that the id's
// store host is this broker (the tools send the request to that host), and
// neither does this.
func (c *Core) ConsumeMessageDirectly(r DirectConsume, answer func(ClientReply, error)) {
	if r.Group == "" {
		answer(ClientReply{}, refuse(BadRequest, "protocol: CONSUME_MESSAGE_DIRECTLY header: consumerGroup: missing"))
		return
	}
	rec, err := c.store().LookupMessageID(r.MsgID)
	switch {
	case errors.Is(err, message.ErrBadMessageID):
		err = errorf(BadRequest, "consume message directly: bad message id %q: %v", r.MsgID, err)
	case errors.Is(err, store.ErrNotFound):
		err = errorf(NoMessage, "consume message directly: no message with id %s in broker %s", r.MsgID, c.cfg.BrokerName)
	case err != nil:
		err = errorf(Internal, "consume message directly: read message %s: %v", r.MsgID, err)
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
	c.calls.ConsumeDirectly(r, rec, func(reply ClientReply, err error) {
		answer(reply, consumerCallError(r.Group, r.ClientID, err))
	})
}

// ConsumerStatus asks every online consumer of group (or only the one
// whose client id is only, when given) for its in-memory offsets of
// topic, all at once, and answers with each client's raw table by client
// id (consumercall.Caller.Status).
func (c *Core) ConsumerStatus(topic, group, only string, answer func(map[string][]byte, error)) {
	if topic == "" || group == "" {
		answer(nil, refuse(BadRequest, "protocol: INVOKE_BROKER_TO_GET_CONSUMER_STATUS header: topic and group are required"))
		return
	}
	c.calls.Status(topic, group, only, func(tables map[string][]byte, err error) {
		if errors.Is(err, consumercall.ErrNoConsumers) {
			err = errorf(NoClient, "No Any Consumer online in the consumer group: [%s]", group)
		}
		answer(tables, err)
	})
}

// SortedClientIDs returns the keys of a ConsumerStatus answer in order.
func SortedClientIDs(tables map[string][]byte) []string { return slices.Sorted(maps.Keys(tables)) }
