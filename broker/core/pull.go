package core

import (
	"time"

	"github.com/runnelmq/runnel/broker/filter"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// PullRequest is one pull of a queue.
type PullRequest struct {
	Group       string
	Topic       string
	QueueID     int32
	QueueOffset int64
	MaxMsgNums  int32
	MaxMsgBytes int32
	// CommitOffset is committed for the group first when HasCommitOffset
	// (the push consumer's piggy-backed commit).
	HasCommitOffset bool
	CommitOffset    int64
	// Suspend lets the pull be held until a message arrives, for
	// SuspendTimeout (capped by Config.MaxSuspend; 0 or less: not held).
	Suspend        bool
	SuspendTimeout time.Duration
	// HasSubscription: the pull carries its own subscription (the pull
	// consumer), in ExpressionType and Expression; otherwise the group's
	// heartbeat gives it, and SubVersion must not be newer than that.
	HasSubscription bool
	ExpressionType  string
	Expression      string
	SubVersion      int64
	// From is the pulling client.
	From Channel
}

// PullStatus is what a pull found (Java's PullStatus, as
// PullMessageProcessor answers it on a master).
type PullStatus uint8

const (
	// PullFound: Messages holds what was read [SUCCESS].
	PullFound PullStatus = iota
	// PullNoNewMessage: nothing at or past the offset yet [PULL_NOT_FOUND].
	PullNoNewMessage
	// PullRetry: pull again now from NextBeginOffset (everything read was
	// filtered out, or a slave sends the consumer to its master)
	// [PULL_RETRY_IMMEDIATELY].
	PullRetry
	// PullOffsetMoved: the offset is outside the queue; resume from
	// NextBeginOffset [PULL_OFFSET_MOVED].
	PullOffsetMoved
)

// MasterBrokerID is the broker id of a group's master (RocketMQ
// MixAll.MASTER_ID), the broker a pull answer suggests unless it suggests
// a slave.
const MasterBrokerID = 0

// PullResult is a pull's answer.
type PullResult struct {
	Status          PullStatus
	Remark          string
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	// SuggestWhichBrokerID is the broker to pull from next.
	SuggestWhichBrokerID int64
	// Messages holds Count stored records back to back (SUCCESS only).
	Messages []byte
	Count    int
	// Recycle, when set, hands Messages back to the store for a later pull
	// to reuse: a front door calls it once nothing refers to them any more
	// (the answer carrying them was written), or never.
	Recycle func()
}

// Pull serves a pull (Java PullMessageProcessor.processRequest). When
// nothing is there and the pull may be held, it is parked and Pull
// returns held; the answer then goes to answer, exactly once, when a
// message arrives on the queue or the suspend time passes (or the core
// drains). Otherwise answer is not called.
func (c *Core) Pull(r PullRequest, answer func(PullResult, error)) (res PullResult, held bool, err error) {
	c.pullCount.Add(1)
	if err := c.checkBrokerReadable(); err != nil {
		return PullResult{}, false, err
	}
	if err := c.checkGroupConsumable(r.Group); err != nil {
		return PullResult{}, false, err
	}
	return c.pull(&r, true, answer)
}

// pull runs one pull. first is true for the request as it arrived and
// false for a re-run after a held pull wakes: only the first run commits
// the piggy-backed offset and may be held.
func (c *Core) pull(r *PullRequest, first bool, answer func(PullResult, error)) (PullResult, bool, error) {
	master := c.be.IsLeader()
	tc, ok := c.readTopic(r.Topic, master)
	if !ok {
		return PullResult{}, false, errorf(TopicNotFound, "topic[%s] not exist, apply first please!", r.Topic)
	}
	if !topicconf.IsReadable(tc.Perm) {
		return PullResult{}, false, errorf(Forbidden, "the topic[%s] pulling message is forbidden", r.Topic)
	}
	if r.QueueID < 0 || int(r.QueueID) >= tc.ReadQueueNums {
		return PullResult{}, false, errorf(InvalidArgument,
			"queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]", r.QueueID, r.Topic, tc.ReadQueueNums, addrOf(r.From))
	}
	filter, err := c.pullFilter(r)
	if err != nil {
		return PullResult{}, false, err
	}
	if !master && !c.cfg.SlaveReadEnable {
		// Java's slave without slaveReadEnable: pull from the master.
		return PullResult{Status: PullRetry, Remark: "the slave does not serve reads (slaveReadEnable=false)",
			NextBeginOffset: r.QueueOffset, MinOffset: c.store().MinOffset(r.Topic, r.QueueID),
			MaxOffset: c.store().MaxOffset(r.Topic, r.QueueID), SuggestWhichBrokerID: MasterBrokerID}, false, nil
	}
	if first && r.HasCommitOffset {
		c.offsets.CommitForward(offsets.Key{Group: r.Group, Topic: r.Topic, QueueID: r.QueueID}, r.CommitOffset)
	}
	got, err := c.store().Get(r.Topic, r.QueueID, r.QueueOffset, int(max(r.MaxMsgNums, 1)), int(r.MaxMsgBytes), filter)
	if err != nil {
		return PullResult{}, false, errorf(Internal, "store read failed: %v", err)
	}
	status := pullStatus(got.Status, r.QueueOffset)
	if !master && status != PullFound {
		// A slave serves what it has and sends the rest to the master
		// (Java: "slave redirect pullRequest to master"); it holds none.
		status = PullRetry
	}
	// A suspend time of 0 or less asks for no wait: answered now, where
	// Java holds it until its next hold check (about 5 s).
	if master && status == PullNoNewMessage && first && r.Suspend && r.SuspendTimeout > 0 && answer != nil && !c.closing.Load() {
		if c.hold(r, answer) {
			return PullResult{}, true, nil
		}
		// A message arrived between the read and the hold: read again.
		return c.pull(r, false, nil)
	}
	res := PullResult{
		Status:               status,
		Remark:               got.Status.String(),
		NextBeginOffset:      got.NextBeginOffset,
		MinOffset:            got.MinOffset,
		MaxOffset:            got.MaxOffset,
		SuggestWhichBrokerID: MasterBrokerID,
	}
	if master && c.cfg.SlaveReadEnable && c.consumeSlowly(r) {
		res.SuggestWhichBrokerID = WhichBrokerWhenConsumeSlowly
	}
	if status == PullFound {
		res.Messages, res.Count, res.Recycle = got.Messages, got.Count, got.Recycle
		c.countPulled(r.Group, got.Count)
	}
	return res, false, nil
}

// WhichBrokerWhenConsumeSlowly is the slave a master suggests to a
// consumer far behind (Java SubscriptionGroupConfig
// whichBrokerWhenConsumeSlowly, default 1).
const WhichBrokerWhenConsumeSlowly = 1

// consumeSlowly is Java's isSuggestPullingFromSlave: the log behind the
// pulled offset is larger than the share of memory it may be read from
// (accessMessageInMemoryMaxRatio), so the pull is served from disk.
func (c *Core) consumeSlowly(r *PullRequest) bool {
	if c.cfg.ConsumeSlowlyBytes <= 0 {
		return false
	}
	st := c.store()
	e, err := st.QueueEntry(r.Topic, r.QueueID, r.QueueOffset)
	return err == nil && st.MaxPhysOffset()-e.PhysOffset > c.cfg.ConsumeSlowlyBytes
}

// readTopic is a topic's config for a read. A slave's table is the one
// it loaded when it last was master (or opened); topics created since are
// in its store, written by the log.
func (c *Core) readTopic(name string, master bool) (topicconf.Config, bool) {
	if tc, ok := c.topics.get(name); ok || master {
		return tc, ok
	}
	m, ok, err := c.store().Topic(name)
	if err != nil || !ok {
		return topicconf.Config{}, false
	}
	withDefaultFilter(&m)
	return m, true
}

// pullStatus maps a store status to the pull's, as Java's
// PullMessageProcessor does on a master.
func pullStatus(s store.GetStatus, offset int64) PullStatus {
	switch s {
	case store.GetFound:
		return PullFound
	case store.GetNoMatchedMessage, store.GetMessageWasRemoving:
		return PullRetry
	case store.GetNoMatchedLogicQueue, store.GetNoMessageInQueue:
		if offset != 0 {
			return PullOffsetMoved
		}
		return PullNoNewMessage
	case store.GetOffsetFoundNull, store.GetOffsetOverflowOne:
		return PullNoNewMessage
	case store.GetOffsetTooSmall, store.GetOffsetOverflowBadly:
		return PullOffsetMoved
	}
	return PullNoNewMessage
}

// hold parks the pull until a message arrives on its queue or its suspend
// time passes. It returns false when the pull must be run again now.
func (c *Core) hold(r *PullRequest, answer func(PullResult, error)) bool {
	wait := min(r.SuspendTimeout, c.cfg.MaxSuspend)
	return c.park(r, c.cfg.Now().Add(wait), answer)
}

func (c *Core) park(r *PullRequest, deadline time.Time, answer func(PullResult, error)) bool {
	lp := &longpoll.Request{
		Key:      longpoll.Key{Topic: r.Topic, QueueID: r.QueueID},
		Offset:   r.QueueOffset,
		Deadline: deadline,
	}
	lp.Wake = func(expired bool) {
		if r.From != nil && r.From.Closed() {
			return // the consumer is gone; nobody to answer
		}
		c.spawn(func() { c.answerHeld(r, deadline, expired, answer) })
	}
	return c.holds.Park(lp)
}

// answerHeld runs a woken pull again and answers it. When the arrivals
// that woke it are all filtered out by its subscription and time is left,
// it is held again from past them instead (Java wakes a held pull only for
// a matching arrival), so a consumer of rare tags is not sent round for a
// new pull on every message of other tags. A hold refused because more
// arrived meanwhile reads those, and so on: each round starts past the
// last, so the loop ends at the queue's end.
func (c *Core) answerHeld(r *PullRequest, deadline time.Time, expired bool, answer func(PullResult, error)) {
	res, _, err := c.pull(r, false, nil)
	from := r.QueueOffset
	for err == nil && !expired && res.Status == PullRetry && !c.closing.Load() &&
		c.cfg.Now().Before(deadline) && res.NextBeginOffset > from {
		past := *r // park keeps it: one per round
		past.QueueOffset, from = res.NextBeginOffset, res.NextBeginOffset
		if c.park(&past, deadline, answer) {
			return
		}
		res, _, err = c.pull(&past, false, nil)
	}
	answer(res, err)
}

// pullFilter returns the filter of a pull: from the request when it carries
// its subscription (the pull consumer), else from the group's heartbeat
// (push consumers). A nil filter passes everything.
func (c *Core) pullFilter(r *PullRequest) (store.Filter, error) {
	if r.HasSubscription {
		switch r.ExpressionType {
		case "", message.ExpressionTypeTag:
			if f := filter.TagExpression(r.Expression); f != nil {
				return f, nil
			}
			return c.retryFilter(r.Group, r.Topic), nil
		case message.ExpressionTypeSQL92:
			return c.sqlFilter(r.Expression)
		}
		return nil, errorf(FilterUnsupported,
			"The broker does not support consumer to filter message by %s", r.ExpressionType)
	}
	sub, hasGroup, ok := c.clients.Subscription(r.Group, r.Topic)
	if !hasGroup {
		return nil, errorf(SubscriptionNotFound,
			"the consumer's group info not exist, group: %s; send a heartbeat first", r.Group)
	}
	if !ok {
		return nil, errorf(SubscriptionNotFound,
			"the consumer's subscription not exist, group: %s, topic: %s", r.Group, r.Topic)
	}
	if sub.Version < r.SubVersion {
		return nil, errorf(SubscriptionStale,
			"the consumer's subscription not latest, group: %s, topic: %s", r.Group, r.Topic)
	}
	switch sub.ExpressionType {
	case "", message.ExpressionTypeTag:
	case message.ExpressionTypeSQL92:
		if !c.cfg.EnablePropertyFilter {
			return nil, refuse(FilterUnsupported, "The broker does not support consumer to filter message by SQL92")
		}
	default:
		return nil, errorf(FilterDataMissing,
			"The broker does not support consumer to filter message by %s (group %s, topic %s)", sub.ExpressionType, r.Group, r.Topic)
	}
	// Compiled at heartbeat time.
	switch f := sub.Filter.(type) {
	case badExpression:
		return nil, parseFailed(sub.Expression, f.err)
	case store.Filter:
		return f, nil
	}
	return c.retryFilter(r.Group, r.Topic), nil
}

// addrOf returns a channel's address for remarks ("" for none).
func addrOf(ch Channel) string {
	if ch == nil {
		return ""
	}
	return ch.RemoteAddr()
}
