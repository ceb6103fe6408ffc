package admin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Reading and re-sending a group's dead letters. Both read %DLQ%<group>
// with tool pulls (Pull), from each queue's oldest offset, and commit
// nothing, so a consumer of the dead-letter topic itself is not disturbed.
// A re-send is planned first (every dead letter picked is read and its
// origin checked, no body kept) and then sent over the same ranges, so
// nothing is sent unless all of it can be, and memory does not grow with
// the queue.

// dlqRange is the part of one dead-letter queue a read covers: from lo up
// to (not including) hi.
type dlqRange struct {
	mq     queue.MessageQueue
	lo, hi int64
}

// dlqRanges are the current extents of topic's readable queues. A topic
// that does not exist fails with an error matching ErrNotFound.
func (a *Admin) dlqRanges(ctx context.Context, topic string) ([]dlqRange, error) {
	route, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	readable := map[string]int{}
	for _, qd := range route.QueueDatas {
		if qd.Perm&protocol.PermRead != 0 {
			readable[qd.BrokerName] = qd.ReadQueueNums
		}
	}
	if len(readable) == 0 {
		// Brokers before RocketMQ 4.7 (and Runnel before it followed 4.7)
		// create dead-letter topics write-only.
		return nil, fmt.Errorf("%w: topic %s has no readable queue: brokers before RocketMQ 4.7 create dead-letter topics write-only (perm W); give it perm RW to read it",
			ErrNotReadable, topic)
	}
	stats, err := a.TopicStats(ctx, topic)
	if err != nil {
		return nil, err
	}
	var out []dlqRange
	for _, s := range stats {
		if n, ok := readable[s.Broker]; ok && int(s.QueueID) < n {
			out = append(out, dlqRange{mq: queue.MessageQueue{Topic: topic, BrokerName: s.Broker, QueueID: s.QueueID}, lo: s.MinOffset, hi: s.MaxOffset})
		}
	}
	return out, nil
}

// scanRanges hands visit every message of ranges until it returns false.
func (a *Admin) scanRanges(ctx context.Context, ranges []dlqRange, visit func(*protocol.MessageExt) bool) error {
	stop := false
	for _, r := range ranges {
		err := a.ScanQueue(ctx, r.mq, r.lo, r.hi, func(m *protocol.MessageExt) bool {
			stop = !visit(m)
			return !stop
		})
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// DeadLetters returns up to max of group's dead letters, oldest first per
// queue, and how many its dead-letter topic holds. A group without one
// fails with an error matching ErrNotFound.
func (a *Admin) DeadLetters(ctx context.Context, group string, max int) ([]*protocol.MessageExt, int64, error) {
	if err := checkName("group", group); err != nil {
		return nil, 0, err
	}
	if max < 1 {
		return nil, 0, fmt.Errorf("%w: max %d: want at least 1", ErrBadArgument, max)
	}
	ranges, err := a.dlqRanges(ctx, DLQTopic(group))
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, r := range ranges {
		total += r.hi - r.lo
	}
	var out []*protocol.MessageExt
	err = a.scanRanges(ctx, ranges, func(m *protocol.MessageExt) bool {
		out = append(out, m)
		return len(out) < max
	})
	return out, total, err
}

// ResendPlan is a checked re-send of dead letters, made by PlanResend and
// carried out by Resend.
type ResendPlan struct {
	Group string
	// Count is how many dead letters are picked; Topics how many go to
	// each original topic.
	Count  int
	Topics map[string]int

	ranges []dlqRange
	pick   func(*protocol.MessageExt) bool
}

// Destinations says where the copies go, "orders (3), billing (1)".
func (p *ResendPlan) Destinations() string {
	var dest []string
	for _, t := range slices.Sorted(maps.Keys(p.Topics)) {
		dest = append(dest, fmt.Sprintf("%s (%d)", t, p.Topics[t]))
	}
	return strings.Join(dest, ", ")
}

// PlanResend picks group's dead letters named by ids (each its MsgID or
// OffsetMsgID, any case), or every one with all, and checks that each has
// an original topic to go back to. An id that names no dead letter fails
// with an error matching ErrNotFound, a dead letter without a usable
// origin with ErrBadArgument; either way nothing is to be sent. A group
// without a dead-letter topic plans nothing when all is set.
func (a *Admin) PlanResend(ctx context.Context, group string, ids []string, all bool) (*ResendPlan, error) {
	if err := checkName("group", group); err != nil {
		return nil, err
	}
	found := map[string]bool{} // by upper-case id
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			found[strings.ToUpper(id)] = false
		}
	}
	switch {
	case all && len(found) > 0:
		return nil, fmt.Errorf("%w: ids and all exclude each other", ErrBadArgument)
	case !all && len(found) == 0:
		return nil, fmt.Errorf("%w: no dead letter named (give ids, or all)", ErrBadArgument)
	}
	topic := DLQTopic(group)
	p := &ResendPlan{Group: group, Topics: map[string]int{}}
	p.pick = func(m *protocol.MessageExt) bool {
		if all {
			return true
		}
		_, byID := found[strings.ToUpper(m.MsgID)]
		_, byOffset := found[strings.ToUpper(m.OffsetMsgID)]
		return byID || byOffset
	}
	ranges, err := a.dlqRanges(ctx, topic)
	if errors.Is(err, ErrNotFound) && all {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.ranges = ranges
	var bad error
	err = a.scanRanges(ctx, ranges, func(m *protocol.MessageExt) bool {
		if !p.pick(m) {
			return true
		}
		for _, id := range []string{m.MsgID, m.OffsetMsgID} {
			if _, ok := found[strings.ToUpper(id)]; ok {
				found[strings.ToUpper(id)] = true
			}
		}
		origin, err := DeadLetterOrigin(m)
		if err != nil {
			bad = err
			return false
		}
		p.Count++
		p.Topics[origin]++
		return true
	})
	switch {
	case err != nil:
		return nil, err
	case bad != nil:
		return nil, fmt.Errorf("%w; nothing re-sent", bad)
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(found)) {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("admin: %w: no dead letter with id %s in %s (ids are a dead letter's msgId or offsetMsgId); nothing re-sent",
			ErrNotFound, strings.Join(missing, ", "), topic)
	}
	return p, nil
}

// Resent is one dead letter sent again.
type Resent struct {
	DeadMsgID       string `json:"deadLetterMsgId"`
	DeadOffsetMsgID string `json:"deadLetterOffsetMsgId"`
	SendResult
}

// Resend sends a copy of each dead letter of p to its original topic
// (with ResendProperties: a new message id, no retry bookkeeping), calling
// each, when not nil, after every send; an error from each stops it. It
// returns how many were sent. The dead letters stay where they are: a
// RocketMQ topic cannot delete single messages. Fewer found than planned
// (retention cut the queue meanwhile) is an error after the others went.
func (a *Admin) Resend(ctx context.Context, p *ResendPlan, each func(Resent) error) (int, error) {
	sent := 0
	var sendErr error
	err := a.scanRanges(ctx, p.ranges, func(m *protocol.MessageExt) bool {
		if !p.pick(m) {
			return true
		}
		var origin string
		if origin, sendErr = DeadLetterOrigin(m); sendErr != nil {
			return false
		}
		res, err := a.SendMessage(ctx, resendOf(m, origin))
		if err != nil {
			sendErr = fmt.Errorf("re-sent %d of %d; dead letter %s to %s: %w", sent, p.Count, m.OffsetMsgID, origin, err)
			return false
		}
		sent++
		if each != nil {
			sendErr = each(Resent{DeadMsgID: m.MsgID, DeadOffsetMsgID: m.OffsetMsgID, SendResult: *res})
		}
		return sendErr == nil
	})
	if err := errors.Join(err, sendErr); err != nil {
		return sent, err
	}
	if sent != p.Count {
		return sent, fmt.Errorf("admin: re-sent %d of the %d dead letters found: the others left %s meanwhile", sent, p.Count, DLQTopic(p.Group))
	}
	return sent, nil
}

// resendOf is the send of dead letter m's copy to origin: its body, flag
// and ResendProperties.
func resendOf(m *protocol.MessageExt, origin string) Send {
	props := ResendProperties(m)
	s := Send{Topic: origin, Body: m.Body, Flag: m.Flag, Tags: props[protocol.PropertyTags], Keys: m.Keys()}
	for _, k := range []string{protocol.PropertyTags, protocol.PropertyKeys, protocol.PropertyWaitStoreMsgOK} {
		delete(props, k)
	}
	s.Properties = props
	return s
}
