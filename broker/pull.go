package broker

import (
	"context"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// handlePull serves PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361).
func (b *Broker) handlePull(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	b.pullCount.Add(1)
	var h protocol.PullMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	return b.pull(c, req, &h, true)
}

// pull runs one pull (Java PullMessageProcessor.processRequest). first is
// true for the request as it arrived and false for the re-run after a
// held pull wakes: only the first run commits the piggy-backed offset and
// may be held. It returns nil when the request is held; the answer then
// goes out through c.Reply.
func (b *Broker) pull(c *remoting.Conn, req *protocol.Command, h *protocol.PullMessageRequestHeader, first bool) *protocol.Command {
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		return errResponse(req, protocol.RespTopicNotExist, "topic[%s] not exist, apply first please!", h.Topic)
	}
	if !protocol.IsReadable(tc.Perm) {
		return errResponse(req, protocol.RespNoPermission, "the topic[%s] pulling message is forbidden", h.Topic)
	}
	if h.QueueID < 0 || int(h.QueueID) >= tc.ReadQueueNums {
		return errResponse(req, protocol.RespInvalidParameter,
			"queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]", h.QueueID, h.Topic, tc.ReadQueueNums, c.RemoteAddr())
	}
	filter, resp := b.pullFilter(req, h)
	if resp != nil {
		return resp
	}
	if first && protocol.PullHasCommitOffset(h.SysFlag) {
		b.offsets.CommitForward(offsets.Key{Group: h.ConsumerGroup, Topic: h.Topic, QueueID: h.QueueID}, h.CommitOffset)
	}
	res, err := b.st.Get(h.Topic, h.QueueID, h.QueueOffset, int(max(h.MaxMsgNums, 1)), int(h.MaxMsgBytes), filter)
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "store read failed: %v", err)
	}
	code := pullCode(res.Status, h.QueueOffset)
	if code == protocol.RespPullNotFound && first && protocol.PullHasSuspend(h.SysFlag) && !b.closing.Load() {
		if b.hold(c, req, h) {
			return nil
		}
		// A message arrived between the read and the hold: read again.
		return b.pull(c, req, h, false)
	}
	resp = protocol.NewResponse(req, code, res.Status.String())
	resp.ExtFields = protocol.PullMessageResponseHeader{
		SuggestWhichBrokerID: protocol.MasterID,
		NextBeginOffset:      res.NextBeginOffset,
		MinOffset:            res.MinOffset,
		MaxOffset:            res.MaxOffset,
	}.Encode()
	if code == protocol.RespSuccess {
		resp.Body = res.Messages
		b.countPulled(h.ConsumerGroup, res.Count)
	}
	return resp
}

// pullCode maps a store status to the pull response code, as Java's
// PullMessageProcessor does on a master.
func pullCode(s store.GetStatus, offset int64) int16 {
	switch s {
	case store.GetFound:
		return protocol.RespSuccess
	case store.GetNoMatchedMessage, store.GetMessageWasRemoving:
		return protocol.RespPullRetryImmediately
	case store.GetNoMatchedLogicQueue, store.GetNoMessageInQueue:
		if offset != 0 {
			return protocol.RespPullOffsetMoved
		}
		return protocol.RespPullNotFound
	case store.GetOffsetFoundNull, store.GetOffsetOverflowOne:
		return protocol.RespPullNotFound
	case store.GetOffsetTooSmall, store.GetOffsetOverflowBadly:
		return protocol.RespPullOffsetMoved
	}
	return protocol.RespPullNotFound
}

// hold parks the pull until a message arrives on its queue or its suspend
// time passes; either way it is then run again and answered. It returns
// false when the pull must be run again now instead.
func (b *Broker) hold(c *remoting.Conn, req *protocol.Command, h *protocol.PullMessageRequestHeader) bool {
	wait := time.Duration(h.SuspendTimeoutMillis) * time.Millisecond
	if wait <= 0 || wait > b.cfg.MaxSuspend {
		wait = b.cfg.MaxSuspend
	}
	return b.park(c, req, h, b.cfg.Now().Add(wait))
}

func (b *Broker) park(c *remoting.Conn, req *protocol.Command, h *protocol.PullMessageRequestHeader, deadline time.Time) bool {
	r := &longpoll.Request{
		Key:      longpoll.Key{Topic: h.Topic, QueueID: h.QueueID},
		Offset:   h.QueueOffset,
		Deadline: deadline,
	}
	r.Wake = func(expired bool) {
		if c.Err() != nil {
			return // the consumer is gone; nobody to answer
		}
		b.spawn(func() { b.answerHeld(c, req, h, deadline, expired) })
	}
	return b.holds.Park(r)
}

// answerHeld runs a woken pull again and answers it. When the arrivals
// that woke it are all filtered out by its subscription and time is left,
// it is held again from past them instead (Java wakes a held pull only for
// a matching arrival), so a consumer of rare tags is not sent round for a
// new pull on every message of other tags.
func (b *Broker) answerHeld(c *remoting.Conn, req *protocol.Command, h *protocol.PullMessageRequestHeader, deadline time.Time, expired bool) {
	resp := b.pull(c, req, h, false)
	if !expired && resp.Code == protocol.RespPullRetryImmediately && !b.closing.Load() && b.cfg.Now().Before(deadline) {
		if next, err := strconv.ParseInt(resp.Ext("nextBeginOffset"), 10, 64); err == nil && next > h.QueueOffset {
			past := *h
			past.QueueOffset = next
			if b.park(c, req, &past, deadline) {
				return
			}
			resp = b.pull(c, req, &past, false)
		}
	}
	resp.Opaque = req.Opaque
	b.send(c, func() error { return c.Reply(resp) })
}

// pullFilter returns the filter of a pull: from the request when it carries
// its subscription (SUBSCRIPTION flag: the pull consumer), else from the
// group's heartbeat (push consumers). A nil filter passes everything. A
// non-nil response is the refusal.
func (b *Broker) pullFilter(req *protocol.Command, h *protocol.PullMessageRequestHeader) (store.Filter, *protocol.Command) {
	if protocol.PullHasSubscription(h.SysFlag) {
		if h.ExpressionType != "" && h.ExpressionType != protocol.ExpressionTypeTag {
			return nil, errResponse(req, protocol.RespSystemError,
				"The broker does not support consumer to filter message by %s", h.ExpressionType)
		}
		tags, codes := protocol.ParseSubExpression(h.Subscription)
		return newTagFilter(tags, codes), nil
	}
	sub, hasGroup, ok := b.clients.Subscription(h.ConsumerGroup, h.Topic)
	if !hasGroup {
		return nil, errResponse(req, protocol.RespSubscriptionNotExist,
			"the consumer's group info not exist, group: %s; send a heartbeat first", h.ConsumerGroup)
	}
	if !ok {
		return nil, errResponse(req, protocol.RespSubscriptionNotExist,
			"the consumer's subscription not exist, group: %s, topic: %s", h.ConsumerGroup, h.Topic)
	}
	if sub.Version < h.SubVersion {
		return nil, errResponse(req, protocol.RespSubscriptionNotLatest,
			"the consumer's subscription not latest, group: %s, topic: %s", h.ConsumerGroup, h.Topic)
	}
	if sub.ExpressionType != "" && sub.ExpressionType != protocol.ExpressionTypeTag {
		return nil, errResponse(req, protocol.RespFilterDataNotExist,
			"The broker does not support consumer to filter message by %s (group %s, topic %s)", sub.ExpressionType, h.ConsumerGroup, h.Topic)
	}
	// Compiled at heartbeat time; nil (every tag) when the type differs.
	f, _ := sub.Filter.(store.Filter)
	return f, nil
}

// filterOf compiles a heartbeat subscription into the store's filter; nil
// passes everything.
func filterOf(s clients.Subscription) store.Filter {
	if protocol.IsSubAll(s.Expression) {
		return nil
	}
	return newTagFilter(s.Tags, s.Codes)
}

// tagFilter matches consume-queue tag hashes against a TAG subscription.
// It holds the codes the subscriber sent and the Java hash of each tag
// string, since the official Go client hashes non-ASCII tags differently
// from the store. Consumers filter by tag string again, so a hash collision
// costs a wasted transfer, never a wrong delivery.
type tagFilter struct {
	codes map[int64]struct{}
}

func newTagFilter(tags []string, codes []int64) store.Filter {
	if len(tags) == 0 && len(codes) == 0 {
		return nil
	}
	f := tagFilter{codes: make(map[int64]struct{}, len(tags)+len(codes))}
	for _, c := range codes {
		f.codes[c] = struct{}{}
	}
	for _, t := range tags {
		if t == protocol.SubAll {
			return nil
		}
		f.codes[protocol.TagsHashCode(t)] = struct{}{}
	}
	return f
}

func (f tagFilter) MatchTagsCode(code int64) bool {
	_, ok := f.codes[code]
	return ok
}

func (f tagFilter) MatchRecord([]byte) bool { return true }
