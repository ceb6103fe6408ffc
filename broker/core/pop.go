package core

import (
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/broker/filter"
	"github.com/runnelmq/runnel/broker/longpoll"
	"github.com/runnelmq/runnel/broker/pop"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// POP consumption (RocketMQ 5): a consumer pops messages, which stay
// invisible to the group for an invisible time, and acknowledges each by
// its receipt handle; what is not acknowledged in time comes back through
// the group's retry topic with its delivery attempt raised, and past the
// group's max attempts goes to its %DLQ%. A FIFO group's queue gives one
// batch at a time and moves on only as it is acknowledged. What is in
// flight is kept through store ops (OpInFlight), so it survives a restart
// and replicates; the in-memory table (package broker/pop) is the master's
// view of it, reloaded when a core becomes master.
//
// Files: pop.go (the request, Pop, its hold), pop_read.go (reading a
// queue, plain and FIFO), pop_ack.go (Ack, BatchAck, ChangeInvisible,
// ForwardToDLQ), pop_revive.go (messages whose invisible time passed: the
// due-time service's third source).

// Limits of a pop (Java's PopMessageProcessor and the proxy's).
const (
	// MaxPopMessages is the most messages one pop returns.
	MaxPopMessages = 32
	// MaxInvisibleTime is the longest invisible time a pop or a change
	// may ask for (the proxy allows 12 h to gRPC clients; remoting
	// clients get this much).
	MaxInvisibleTime = 24 * time.Hour
	// maxHeldPops bounds the pops held at once (Java maxPopPollingSize);
	// past it a pop that finds nothing is answered PopPollingFull.
	maxHeldPops = 100000
	// retryEvery: one pop in retryEvery reads the group's retry topic
	// before the topic (Java popFromRetryProbability, 20%); the others
	// read it after the topic when they are not full.
	retryEvery = 5
	// defaultPopMaxTimes is the reconsume limit of a group whose
	// retryMaxTimes is negative (Java's default, 16).
	defaultPopMaxTimes = 16
)

// PopRequest is one receive of a POP consumer: remoting's POP_MESSAGE,
// gRPC's ReceiveMessage.
type PopRequest struct {
	Group string
	Topic string
	// QueueID is the queue to read; -1 lets the broker read the topic's
	// readable queues, each pop starting at the next one.
	QueueID int32
	// MaxMessages is how many messages at most, 1 to MaxPopMessages.
	MaxMessages int
	// InvisibleTime is how long popped messages stay invisible to the
	// group; more than 0, at most MaxInvisibleTime.
	InvisibleTime time.Duration
	// PollTime is how long a pop that finds nothing is held for a message
	// to arrive (capped by Config.MaxSuspend); 0 answers at once.
	PollTime time.Duration
	// ExpressionType (TAG, the default, or SQL92) and Expression filter
	// what is popped; an empty expression takes everything.
	ExpressionType string
	Expression     string
	// AttemptID names a FIFO pop's attempt: a pop again with the same id
	// while its batch is in flight gets the same batch again (a client
	// retrying a receive whose answer it lost).
	AttemptID string
	// Orderly pops as FIFO even when the group is not configured
	// consumeMessageOrderly (remoting's order flag).
	Orderly bool
	// FromMin: a queue the group never consumed is read from its first
	// message; otherwise from the first too while the queue never lost
	// any (young, as Java's "still in memory"), else from its last (Java's
	// ConsumeInitMode MIN and MAX).
	FromMin bool
	// From is the popping client.
	From Channel
}

// PopStatus is what a pop found.
type PopStatus uint8

const (
	// PopFound: Messages holds what was popped [remoting SUCCESS].
	PopFound PopStatus = iota
	// PopNoNewMessage: nothing to pop, after the poll time if held
	// [POLLING_NOT_FOUND].
	PopNoNewMessage
	// PopPollingFull: nothing to pop, and too many pops are held to hold
	// this one [POLLING_FULL].
	PopPollingFull
)

// PopResult is a pop's answer.
type PopResult struct {
	Status   PopStatus
	Messages []Popped
	// PopTime is when the messages were popped and InvisibleTime how long
	// they stay invisible (every handle of the answer says the same).
	PopTime       time.Time
	InvisibleTime time.Duration
	// Orderly says the pop was FIFO.
	Orderly bool
	// Rest is how many messages the queues the pop read hold past it
	// (Java's restNum).
	Rest int64
}

// Popped is one popped message.
type Popped struct {
	// Message is the message as stored, decoded, with its queue, offsets
	// and reconsume times; a message that came back through the group's
	// retry topic has the topic the consumer asked for (its queue and
	// offsets are the retry topic's; RETRY_TOPIC says so).
	Message *message.MessageExt
	// Handle is the receipt handle: opaque to a client, which gives it
	// back to Ack, ChangeInvisible or ForwardToDLQ.
	Handle string
	// DeliveryAttempt is 1 for a first delivery (reconsume times + 1).
	DeliveryAttempt int32
	// InvisibleUntil is when the message comes back unless acknowledged.
	InvisibleUntil time.Time
}

// popRun is a pop checked and resolved, run once or again when woken.
type popRun struct {
	r       PopRequest
	tc      topicconf.Config
	filter  store.Filter
	orderly bool
	// maxTimes is how often a message may be reconsumed before the DLQ.
	maxTimes int32
	// deadline ends the hold.
	deadline time.Time
	answer   func(PopResult, error)
	// peek only looks whether there is something to pop (NOTIFICATION):
	// a result PopFound without messages says there is.
	peek bool
}

// Pop serves a pop (Java PopMessageProcessor, and the proxy's
// ReceiveMessageActivity). When nothing is there and the pop may be held,
// it is parked on every queue it read and Pop returns held; the answer
// then goes to answer, exactly once, when a message arrives on one of
// them (or a FIFO queue is unblocked) and is popped, or the poll time
// passes (or the core drains). Otherwise answer is not called.
func (c *Core) Pop(r PopRequest, answer func(PopResult, error)) (res PopResult, held bool, err error) {
	c.popCount.Add(1)
	run, err := c.checkPop(r, false)
	if err != nil {
		return PopResult{}, false, err
	}
	run.answer = answer
	return c.runPop(run)
}

// NotificationRequest asks whether a group has something to pop from a
// topic (remoting's NOTIFICATION): Java's proxy asks before it pops.
type NotificationRequest struct {
	Group   string
	Topic   string
	QueueID int32
	// PollTime is how long the question may be held until there is.
	PollTime  time.Duration
	Orderly   bool
	AttemptID string
	From      Channel
}

// Notification says whether a group has something to pop from a topic's
// queues (or its retry topic): a FIFO queue blocked by its batch in
// flight has not. Held as a pop is, it answers true on the first arrival
// and false when its poll time passes; answer is called exactly once
// later when held.
func (c *Core) Notification(r NotificationRequest, answer func(hasMsg bool, err error)) (hasMsg, held bool, err error) {
	run, err := c.checkPop(PopRequest{Group: r.Group, Topic: r.Topic, QueueID: r.QueueID, MaxMessages: 1,
		PollTime: r.PollTime, Orderly: r.Orderly, AttemptID: r.AttemptID, From: r.From}, true)
	if err != nil {
		return false, false, err
	}
	if answer != nil {
		run.answer = func(res PopResult, err error) { answer(res.Status == PopFound, err) }
	}
	res, held, err := c.runPop(run)
	return res.Status == PopFound, held, err
}

// runPop runs a checked pop, holding it when it finds nothing and may
// wait.
func (c *Core) runPop(run *popRun) (PopResult, bool, error) {
	r := &run.r
	res, waits, err := c.popOnce(run)
	if err != nil || res.Status == PopFound {
		return res, false, err
	}
	if r.PollTime <= 0 || run.answer == nil || c.closing.Load() {
		return res, false, nil
	}
	if c.heldPops.Load() >= maxHeldPops {
		res.Status = PopPollingFull
		return res, false, nil
	}
	run.deadline = c.cfg.Now().Add(min(r.PollTime, c.cfg.MaxSuspend))
	if c.holdPop(run, waits) {
		return PopResult{}, true, nil
	}
	// A message arrived between the read and the hold: read again.
	res, _, err = c.popOnce(run)
	return res, false, err
}

// checkPop refuses what Java refuses before popping, with its remarks,
// and resolves the topic, the filter and the group's FIFO setting.
func (c *Core) checkPop(r PopRequest, peek bool) (*popRun, error) {
	if err := c.checkBrokerReadable(); err != nil {
		return nil, err
	}
	if !c.be.IsLeader() {
		return nil, c.serviceNotAvailable() // a pop writes its in-flight state
	}
	if remark, ok := checkGroupName(r.Group); !ok {
		return nil, refuse(InvalidArgument, remark)
	}
	if err := c.checkGroupConsumable(r.Group); err != nil {
		return nil, err
	}
	switch {
	case r.MaxMessages < 1 || r.MaxMessages > MaxPopMessages:
		return nil, errorf(InvalidArgument, "the broker[%s] pop message's num %d is not in [1, %d]", c.brokerIP(), r.MaxMessages, MaxPopMessages)
	case !peek && (r.InvisibleTime <= 0 || r.InvisibleTime > MaxInvisibleTime):
		return nil, errorf(InvalidArgument, "invisible time %v is not in (0, %v]", r.InvisibleTime, MaxInvisibleTime)
	case len(r.AttemptID) > maxAttemptID:
		return nil, errorf(InvalidArgument, "attempt id of %d bytes is longer than %d", len(r.AttemptID), maxAttemptID)
	}
	tc, ok := c.topics.get(r.Topic)
	if !ok {
		return nil, errorf(TopicNotFound, "topic[%s] not exist, apply first please!", r.Topic)
	}
	if !topicconf.IsReadable(tc.Perm) {
		return nil, errorf(Forbidden, "the topic[%s] peeking message is forbidden", r.Topic)
	}
	if r.QueueID < -1 || int(r.QueueID) >= tc.ReadQueueNums {
		return nil, errorf(InvalidArgument, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			r.QueueID, r.Topic, tc.ReadQueueNums, addrOf(r.From))
	}
	run := &popRun{r: r, tc: tc, peek: peek}
	switch r.ExpressionType {
	case "", message.ExpressionTypeTag:
		if f := filter.TagExpression(r.Expression); f != nil {
			run.filter = f
		}
	case message.ExpressionTypeSQL92:
		f, err := c.sqlFilter(r.Expression)
		if err != nil {
			return nil, err
		}
		run.filter = f
	default:
		return nil, errorf(FilterUnsupported, "The broker does not support consumer to filter message by %s", r.ExpressionType)
	}
	g, _ := c.GroupConfig(r.Group)
	run.orderly = r.Orderly || g.ConsumeMessageOrderly
	run.maxTimes = popMaxTimes(g.RetryMaxTimes)
	return run, nil
}

// maxAttemptID bounds a FIFO pop's attempt id.
const maxAttemptID = 128

// popMaxTimes is a group's reconsume limit for POP: its retryMaxTimes,
// or Java's default when that is negative.
func popMaxTimes(retryMaxTimes int) int32 {
	if retryMaxTimes < 0 {
		return defaultPopMaxTimes
	}
	return int32(retryMaxTimes)
}

// MaxDeliveryAttempts is how often a group's message is delivered before
// it goes to the %DLQ% (the proxy's max_attempts: retryMaxTimes + 1), for
// the gRPC door's Settings.
func (c *Core) MaxDeliveryAttempts(group string) int32 {
	g, _ := c.GroupConfig(group)
	return popMaxTimes(g.RetryMaxTimes) + 1
}

// popWait is a queue a pop that found nothing waits on: woken by an
// arrival past offset, or by WakeKey.
type popWait struct {
	key    longpoll.Key
	offset int64
	// until, when set, ends the wait before the poll time: a FIFO queue
	// blocked until then.
	until time.Time
	// wakes is the key's wake count read before the queue was
	// (longpoll.Request.Wakes).
	wakes uint64
}

// popOnce runs the pop once: the retry topic first one time in
// retryEvery, then the topic's queues, then the retry topic if not full.
// It returns what it popped, or nothing and the queues to wait on.
func (c *Core) popOnce(run *popRun) (PopResult, []popWait, error) {
	now := c.cfg.Now()
	r := &run.r
	res := PopResult{Status: PopNoNewMessage, PopTime: now, InvisibleTime: r.InvisibleTime, Orderly: run.orderly}
	var waits []popWait
	retry := pop.RetryTopic(r.Group, r.Topic)
	retryTC, hasRetry := c.topics.get(retry)
	hasRetry = hasRetry && !run.orderly && topicconf.IsReadable(retryTC.Perm)
	retryFirst := hasRetry && c.popSeq.Add(1)%retryEvery == 0
	read := func(topic string, q int32) error {
		if run.peek {
			w, found := c.peekQueue(run, topic, q, now)
			if found {
				res.Status = PopFound
			} else {
				waits = append(waits, w)
			}
			return nil
		}
		w, rest, err := c.popQueue(run, topic, q, now, &res)
		res.Rest += rest
		if w != nil {
			waits = append(waits, *w)
		}
		return err
	}
	readRetry := func() error {
		for i := range int32(retryTC.ReadQueueNums) {
			if err := read(retry, i); err != nil {
				return err
			}
		}
		return nil
	}
	if retryFirst {
		if err := readRetry(); err != nil {
			return PopResult{}, nil, err
		}
	}
	if r.QueueID >= 0 {
		if err := read(r.Topic, r.QueueID); err != nil {
			return PopResult{}, nil, err
		}
	} else if n := int32(run.tc.ReadQueueNums); n > 0 {
		start := int32(c.popSeq.Add(1) % uint64(n))
		for i := range n {
			if err := read(r.Topic, (start+i)%n); err != nil {
				return PopResult{}, nil, err
			}
		}
	}
	if hasRetry && !retryFirst {
		if err := readRetry(); err != nil {
			return PopResult{}, nil, err
		}
	}
	if len(res.Messages) > 0 {
		res.Status = PopFound
		c.countPulled(r.Group, len(res.Messages))
		return res, nil, nil
	}
	if res.Status == PopFound { // a peek that found something
		return res, nil, nil
	}
	if !run.orderly && !hasRetry {
		// The retry topic is made by the first message that comes back:
		// a held pop waits on its queues too, to be woken by that one.
		for q := range int32(c.retryQueues(r.Group)) {
			k := longpoll.Key{Topic: retry, QueueID: q}
			waits = append(waits, popWait{key: k, wakes: c.holds.WakeCount(k)})
		}
	}
	return res, waits, nil
}

// heldPop is a pop parked on the queues it read.
type heldPop struct {
	run   *popRun
	reqs  []*longpoll.Request
	woken atomic.Bool
}

// holdPop parks run on each queue it waits on, until the first wake. It
// returns false, holding nothing, when one of them already has news.
func (c *Core) holdPop(run *popRun, waits []popWait) bool {
	if len(waits) == 0 {
		return false // nothing to wake it: a topic with no readable queue
	}
	h := &heldPop{run: run}
	deadline := run.deadline
	for _, w := range waits {
		if !w.until.IsZero() && w.until.Before(deadline) {
			deadline = w.until // re-read when a FIFO queue unblocks
		}
	}
	for _, w := range waits {
		lp := &longpoll.Request{Key: w.key, Offset: w.offset, Deadline: deadline, Wakes: w.wakes}
		lp.Wake = func(bool) { c.wakePop(h) }
		h.reqs = append(h.reqs, lp)
	}
	c.heldPops.Add(1)
	for i, lp := range h.reqs {
		if !c.holds.Park(lp) {
			// Already news on this queue: take back what was parked,
			// unless a wake of what was parked took the pop meanwhile
			// (then that wake answers it).
			if !h.woken.CompareAndSwap(false, true) {
				return true
			}
			for _, p := range h.reqs[:i] {
				c.holds.Cancel(p)
			}
			c.heldPops.Add(-1)
			return false
		}
	}
	return true
}

// wakePop answers a held pop on the first of its queues' wakes: it runs
// the pop again, and answers what it found, or parks it again while its
// poll time lasts (the news was for others: another pop took the
// arrivals, or they did not match its filter).
func (c *Core) wakePop(h *heldPop) {
	if !h.woken.CompareAndSwap(false, true) {
		return
	}
	for _, lp := range h.reqs {
		c.holds.Cancel(lp)
	}
	c.heldPops.Add(-1)
	run := h.run
	if run.r.From != nil && run.r.From.Closed() {
		return // the consumer is gone; nobody to answer
	}
	c.spawn(func() {
		res, waits, err := c.popOnce(run)
		if err == nil && res.Status != PopFound && !c.closing.Load() && c.cfg.Now().Before(run.deadline) {
			if c.holdPop(run, waits) {
				return
			}
			res, _, err = c.popOnce(run)
		}
		run.answer(res, err)
	})
}

// BrokerName is the broker's name, which receipt handles carry.
func (c *Core) BrokerName() string { return c.cfg.BrokerName }

// InFlight is how many of group's messages read from topic (the topic
// itself or its retry topic, by name) are in flight now.
func (c *Core) InFlight(group, topic string) int { return c.inflight.Count(group, topic) }

// HeldPops returns how many pops are held now.
func (c *Core) HeldPops() int { return int(c.heldPops.Load()) }

// PopRequests returns how many pops the core has served.
func (c *Core) PopRequests() int64 { return c.popCount.Load() }
