package core

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// Transactional messages, as Java's broker keeps them
// (TransactionalMessageBridge, EndTransactionProcessor):
//
//   - a half message (sysFlag TRANSACTION_PREPARED, or TRAN_MSG=true) is
//     stored in RMQ_SYS_TRANS_HALF_TOPIC queue 0 with its real topic and
//     queue in REAL_TOPIC and REAL_QID and its transaction bits cleared, so
//     no consumer of the real topic can see it;
//   - END_TRANSACTION (37) commits (the half goes to its real queue as a
//     normal message with the COMMIT bits) or rolls back (nothing is
//     stored); either way an op message goes to RMQ_SYS_TRANS_OP_HALF_TOPIC
//     queue 0 (tag "d", body the ended copy's half queue offset, as Java),
//     in the same atomic write as the committed message;
//   - the check service (txcheck.go) asks producers about halves without an
//     op and re-puts each checked half as a renewed copy.
//
// Unlike Java, every copy of one transaction (the half the producer sent
// and the copies the check service renews) names the first copy's commit
// log offset, its origin (the RUNNEL_TRAN_ORIGIN property on renewed
// copies; a half without it is its own origin), and the op message carries
// that origin in its KEYS, so the store's key index answers "has this
// transaction ended?" durably. That makes END_TRANSACTION idempotent: a
// second commit (the producer's own and a check's answer racing, or a
// resend after a broker restart) finds the op and stores nothing. A
// transaction ends exactly once, under its origin's lock.

// Transaction system names (Java TransactionalMessageUtil, MixAll).
const (
	// txCheckGroup is the consumer group whose offset on the half queue is
	// the check service's progress (MixAll.CID_SYS_RMQ_TRANS).
	txCheckGroup = "CID_SYS_RMQ_TRANS"
	// txOpTag is the tag of op messages (TransactionalMessageUtil.REMOVETAG).
	txOpTag = "d"
	// propTxOrigin is the commit log offset of a transaction's first half
	// copy, set on renewed copies. Runnel's own; removed on commit.
	propTxOrigin = "RUNNEL_TRAN_ORIGIN"
	// propTxEnd records, on an op message, how the transaction ended
	// (txEndCommit, txEndRollback, txEndDiscard). Runnel's own.
	propTxEnd = "RUNNEL_TRAN_END"
)

// How a transaction ended, as op messages record it.
const (
	txEndCommit   = "commit"
	txEndRollback = "rollback"
	txEndDiscard  = "discard"
)

// txLockStripes is the number of locks transactions are spread over by
// origin; ends of different transactions rarely wait for each other.
const txLockStripes = 64

// txState is the broker's transaction bookkeeping; everything durable is in
// the store.
type txState struct {
	// locks serialise the end of one transaction (END_TRANSACTION, a check
	// discarding it): look for its op, then write. Striped by origin.
	locks [txLockStripes]sync.Mutex
	// checkMu serialises check passes (the loop, or a test calling
	// CheckTransactions).
	checkMu sync.Mutex
	// rr rotates the producer connection a check goes to.
	rr uint64
}

func (t *txState) lock(origin int64) *sync.Mutex {
	return &t.locks[uint64(origin)%txLockStripes]
}

// isHalfSend reports whether a send carries a transaction's half message.
// Java's SendMessageProcessor goes by TRAN_MSG; the clients also set the
// PREPARED sysFlag, which is what older Runnel checked; either counts.
func isHalfSend(sysFlag int32, props map[string]string) bool {
	if sysFlag&protocol.SysFlagTransactionMask == protocol.SysFlagTransactionPrep {
		return true
	}
	v, err := strconv.ParseBool(props[protocol.PropertyTransactionPrepared])
	return err == nil && v
}

// toHalf turns the message of a half send into what is stored
// (TransactionalMessageBridge.parseHalfMessageInner): the real topic and
// queue move to properties and the message goes to the half queue, its
// transaction bits cleared. It makes sure the half names its producer
// group, which END_TRANSACTION and the check need.
func (c *Core) toHalf(group string, m *protocol.MessageExt) error {
	if err := c.ensureTxTopic(topicTransHalf); err != nil {
		return err
	}
	m.SetProperty(protocol.PropertyRealTopic, m.Topic)
	m.SetProperty(protocol.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	if m.Property(protocol.PropertyProducerGroup) == "" {
		m.SetProperty(protocol.PropertyProducerGroup, group)
	}
	m.SysFlag &^= protocol.SysFlagTransactionMask
	m.Topic, m.QueueID = topicTransHalf, 0
	return nil
}

// ensureTxTopic creates a transaction system topic on first use, with one
// queue, as Java's bridge does (selectTopicConfig).
func (c *Core) ensureTxTopic(name string) error {
	_, created, err := c.topics.createIfAbsent(newTopic(name, 1, defaultTopicPerm))
	if err != nil {
		return errorf(protocol.RespSystemError, "create topic %s: %v", name, err)
	}
	if created {
		c.log.Info("broker: transaction topic created", "topic", name)
		c.cfg.TopicsChanged(false)
	}
	return nil
}

// EndTransaction ends a transaction (END_TRANSACTION, oneway from the
// official clients). UNKNOW (0) and unknown states do nothing and report
// answered false: Java leaves those to the check and does not answer.
// COMMIT and ROLLBACK check the half the request names (it must be a half
// of the request's producer group at its queue offset) and end its
// transaction once.
func (c *Core) EndTransaction(h protocol.EndTransactionRequestHeader, client, remark string) (answered bool, err error) {
	var end string
	switch h.CommitOrRollback {
	case protocol.TransactionCommit:
		end = txEndCommit
	case protocol.TransactionRollback:
		end = txEndRollback
	default:
		c.log.Debug("broker: end transaction with state unknown, left to the check",
			"producer", client, "group", h.ProducerGroup, "msgId", h.MsgID, "fromCheck", h.FromTransactionCheck, "remark", remark)
		return false, nil
	}
	half, err := c.lookupHalf(&h)
	if err != nil {
		return true, err
	}
	origin := txOrigin(half)
	mu := c.txn.lock(origin)
	mu.Lock()
	defer mu.Unlock()
	prev, err := c.txEnded(origin)
	if err != nil {
		return true, errorf(protocol.RespSystemError, "look up transaction op: %v", err)
	}
	if prev != "" {
		if prev == end {
			// The same end again (a check's answer after the producer's own,
			// a resend): already done, nothing more to store.
			return true, nil
		}
		return true, errorf(protocol.RespSystemError,
			"the transaction of message %s has already ended: %s, cannot %s it", h.MsgID, prev, end)
	}
	msgs := []*protocol.MessageExt{c.txOp(half, origin, end)}
	if end == txEndCommit {
		final, err := c.committed(half)
		if err != nil {
			return true, errorf(protocol.RespSystemError, "%v", err)
		}
		msgs = append([]*protocol.MessageExt{final}, msgs...)
	}
	if err := c.ensureTxTopic(topicTransOpHalf); err != nil {
		return true, err
	}
	if _, err := c.put(msgs); err != nil {
		return true, c.putError(err)
	}
	return true, nil
}

// lookupHalf reads the half the request names and checks it against the
// request (EndTransactionProcessor.checkPrepareMessage).
func (c *Core) lookupHalf(h *protocol.EndTransactionRequestHeader) (*protocol.MessageExt, error) {
	notFound := func(why string) error {
		return errorf(protocol.RespSystemError,
			"Find prepared transaction message failed: commitLogOffset %d: %s", h.CommitLogOffset, why)
	}
	rec, err := c.store().ReadRecord(h.CommitLogOffset)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no message there")
	}
	if err != nil {
		return nil, errorf(protocol.RespSystemError, "read prepared transaction message: %v", err)
	}
	m, _, err := protocol.DecodeStoredMessage(rec, false)
	if err != nil {
		return nil, notFound(err.Error())
	}
	switch {
	case m.Topic != topicTransHalf || m.Property(protocol.PropertyRealTopic) == "":
		return nil, notFound("not a half message")
	case m.Property(protocol.PropertyProducerGroup) != h.ProducerGroup:
		return nil, errorf(protocol.RespSystemError, "The producer group wrong: the half message is of %q, not %q",
			m.Property(protocol.PropertyProducerGroup), h.ProducerGroup)
	case m.QueueOffset != h.TranStateTableOffset:
		return nil, errorf(protocol.RespSystemError, "The transaction state table offset wrong: the half message is at %d, not %d",
			m.QueueOffset, h.TranStateTableOffset)
	}
	return m, nil
}

// txOrigin returns the commit log offset of the first copy of m's
// transaction.
func txOrigin(m *protocol.MessageExt) int64 {
	if v, err := strconv.ParseInt(m.Property(propTxOrigin), 10, 64); err == nil {
		return v
	}
	return m.CommitLogOffset
}

// txOpKey is the KEYS word of the op messages of a transaction.
func txOpKey(origin int64) string { return "origin:" + strconv.FormatInt(origin, 10) }

// txEnded returns how the transaction with this origin ended, or "" while
// it has not.
func (c *Core) txEnded(origin int64) (string, error) {
	// Ops are written after their origin: the lookup starts there.
	recs, err := c.store().QueryByKeyFrom(topicTransOpHalf, txOpKey(origin), 1, origin)
	if err != nil || len(recs) == 0 {
		return "", err
	}
	op, _, err := protocol.DecodeStoredMessage(recs[0], false)
	if err != nil {
		return "", fmt.Errorf("core: decode transaction op: %w", err)
	}
	if e := op.Property(propTxEnd); e != "" {
		return e, nil
	}
	return txEndCommit, nil // not expected: every op Runnel writes says how
}

// txOp returns the op message that ends half's transaction.
func (c *Core) txOp(half *protocol.MessageExt, origin int64, end string) *protocol.MessageExt {
	return &protocol.MessageExt{
		Message: protocol.Message{
			Topic: topicTransOpHalf,
			Properties: map[string]string{
				protocol.PropertyTags: txOpTag,
				protocol.PropertyKeys: txOpKey(origin),
				propTxEnd:             end,
			},
			Body: []byte(strconv.FormatInt(half.QueueOffset, 10)),
		},
		BornTimestamp: c.cfg.Now().UnixMilli(),
		BornHost:      c.host(),
		StoreHost:     c.host(),
	}
}

// committed returns the message a commit stores
// (EndTransactionProcessor.endMessageTransaction): the half back in its
// real queue, COMMIT in its sysFlag, REAL_TOPIC and REAL_QID removed, and
// delayed if it carries a DELAY level (Java delays COMMIT messages too).
func (c *Core) committed(half *protocol.MessageExt) (*protocol.MessageExt, error) {
	topic := half.Property(protocol.PropertyRealTopic)
	qid, err := strconv.ParseInt(half.Property(protocol.PropertyRealQueueID), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("core: half message %s has a bad REAL_QID %q", half.OffsetMsgID, half.Property(protocol.PropertyRealQueueID))
	}
	props := maps.Clone(half.Properties)
	delete(props, protocol.PropertyRealTopic)
	delete(props, protocol.PropertyRealQueueID)
	delete(props, propTxOrigin)
	m := &protocol.MessageExt{
		Message:                   protocol.Message{Topic: topic, Flag: half.Flag, Properties: props, Body: half.Body},
		QueueID:                   int32(qid),
		SysFlag:                   half.SysFlag&^protocol.SysFlagTransactionMask | protocol.SysFlagTransactionComm,
		BornTimestamp:             half.BornTimestamp,
		BornHost:                  half.BornHost,
		StoreHost:                 c.host(),
		ReconsumeTimes:            half.ReconsumeTimes,
		PreparedTransactionOffset: half.CommitLogOffset,
	}
	if schedulable(m.SysFlag) && !c.delayLevels().Transform(m) {
		if err := c.divertTimer(m); err != nil { // timer.go: a timer counts from the commit, as in Java
			return nil, err
		}
	}
	return m, nil
}
