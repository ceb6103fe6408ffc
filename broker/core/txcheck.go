package core

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// The transaction check (Java TransactionalMessageCheckService and
// TransactionalMessageServiceImpl.check): every TransactionCheckInterval a
// pass reads the half queue from its progress — the offset of consumer
// group CID_SYS_RMQ_TRANS on it, written to the store at the end of each
// pass — up to where the queue ended when the pass began, and for each half
// whose transaction has no op:
//
//   - checked TransactionCheckMax times already, or older than the file
//     reserved time: discarded, i.e. copied to TRANS_CHECK_MAX_TIME_TOPIC
//     with a "discard" op, in one write;
//   - younger than its immunity (CHECK_IMMUNITY_TIME_IN_SECONDS, else
//     TransactionTimeout), measured from its born time as Java does: with
//     the default immunity the pass stops there (what follows is younger);
//     with its own immunity it is re-put at the end of the queue unchecked,
//     so it holds nothing up;
//   - otherwise: re-put at the end with TRANSACTION_CHECK_TIMES raised, and
//     CHECK_TRANSACTION_STATE (39) goes oneway, about that renewed copy, to
//     one live connection of its producer group (PGROUP), whose answer is an
//     END_TRANSACTION naming the copy. No producer online: the check is
//     counted all the same, as in Java.
//
// A crash between a renewal and the progress write makes the next pass
// renew the half again; the copies share their origin, so the transaction
// still ends once.

// TxCheckResult says what one check pass did.
type TxCheckResult struct {
	// Checked halves were renewed and their producer asked (Sent of them
	// reached a live producer connection).
	Checked, Sent int
	// Ended halves already had their op; Discarded ran out of checks.
	Ended, Discarded int
	// Deferred halves were immune and moved to the end of the queue.
	Deferred int
	// Progress is the half queue offset the next pass starts from.
	Progress int64
}

// txCheckTick runs a check pass (every TransactionCheckInterval).
func (c *Core) txCheckTick() {
	if !c.be.IsLeader() {
		return
	}
	res, err := c.CheckTransactions()
	if err != nil {
		c.log.Error("broker: transaction check", "err", err)
	}
	if res.Checked+res.Discarded > 0 {
		c.log.Info("broker: transaction check", "checked", res.Checked, "sent", res.Sent,
			"discarded", res.Discarded, "progress", res.Progress)
	}
}

// txProgressKey is where the check pass keeps its progress.
var txProgressKey = offsets.Key{Group: txCheckGroup, Topic: topicTransHalf, QueueID: 0}

// CheckTransactions runs one check pass now, with the broker's clock. The
// loop calls it every TransactionCheckInterval; tests call it after moving
// their clock. A store error ends the pass early; the halves not yet done
// are taken again by the next pass.
func (c *Core) CheckTransactions() (TxCheckResult, error) {
	c.txn.checkMu.Lock()
	defer c.txn.checkMu.Unlock()
	var res TxCheckResult
	if _, ok := c.topics.get(topicTransHalf); !ok {
		return res, nil // no half message was ever sent
	}
	start, _ := c.offsets.Get(txProgressKey)
	off := max(start, c.store().MinOffset(topicTransHalf, 0))
	end := c.store().MaxOffset(topicTransHalf, 0) // renewed copies land past it
	now := c.cfg.Now()
	var err error
scan:
	for ; off < end; off++ {
		select {
		case <-c.stop:
			break scan
		default:
		}
		var m *protocol.MessageExt
		m, err = c.readHalf(off)
		if errors.Is(err, store.ErrNotFound) {
			err = nil
			if mo := c.store().MinOffset(topicTransHalf, 0); mo > off+1 {
				off = mo - 1 // removed by retention meanwhile
			}
			continue
		}
		if err != nil {
			break
		}
		if m == nil {
			continue // undecodable, logged
		}
		var stop bool
		if stop, err = c.checkHalf(m, now, &res); err != nil || stop {
			break
		}
	}
	res.Progress = off
	if off != start {
		c.offsets.Commit(txProgressKey, off)
		if perr := c.commitOffsets([]store.OffsetCommit{{Group: txProgressKey.Group, Topic: txProgressKey.Topic, QueueID: 0, Offset: off}}); perr != nil && err == nil {
			err = fmt.Errorf("core: write transaction check progress: %w", perr)
		}
	}
	return res, err
}

// readHalf reads the half at a queue offset; nil (logged) when the record
// does not decode.
func (c *Core) readHalf(off int64) (*protocol.MessageExt, error) {
	e, err := c.store().QueueEntry(topicTransHalf, 0, off)
	if err != nil {
		return nil, err
	}
	rec, err := c.store().ReadRecord(e.PhysOffset)
	if err != nil {
		return nil, err
	}
	m, _, err := protocol.DecodeStoredMessage(rec, false)
	if err != nil {
		c.log.Error("broker: undecodable half message skipped", "queueOffset", off, "err", err)
		return nil, nil
	}
	return m, nil
}

// checkHalf handles one half of a pass; stop ends the pass before it.
func (c *Core) checkHalf(m *protocol.MessageExt, now time.Time, res *TxCheckResult) (stop bool, err error) {
	origin := txOrigin(m)
	mu := c.txn.lock(origin)
	mu.Lock()
	defer mu.Unlock()
	ended, err := c.txEnded(origin)
	if err != nil {
		return false, err
	}
	if ended != "" {
		res.Ended++
		return false, nil
	}
	times, _ := strconv.Atoi(m.Property(protocol.PropertyTransactionCheckTimes))
	age := now.UnixMilli() - m.BornTimestamp
	if times >= c.cfg.TransactionCheckMax || age > c.cfg.FileReservedTime.Milliseconds() {
		res.Discarded++
		return false, c.discardHalf(m, origin)
	}
	immunity, own := c.txImmunity(m)
	if age >= 0 && age < immunity.Milliseconds() {
		if !own {
			return true, nil
		}
		res.Deferred++
		_, err := c.renewHalf(m, origin, times)
		return false, err
	}
	renewed, err := c.renewHalf(m, origin, times+1)
	if err != nil {
		return false, err
	}
	res.Checked++
	if c.sendCheck(renewed) {
		res.Sent++
	}
	return false, nil
}

// txImmunity returns how long after its birth a half is left alone, and
// whether the half set it itself (Java getImmunityTime: seconds, -1 or
// unparsable meaning the broker's TransactionTimeout).
func (c *Core) txImmunity(m *protocol.MessageExt) (time.Duration, bool) {
	v := m.Property(protocol.PropertyCheckImmunityTimeInSecs)
	if v == "" {
		return c.cfg.TransactionTimeout, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == -1 {
		return c.cfg.TransactionTimeout, true
	}
	return time.Duration(n) * time.Second, true
}

// renewHalf re-puts a half at the end of the half queue, naming its origin
// and with TRANSACTION_CHECK_TIMES set to times (when > 0), and returns the
// copy as stored.
func (c *Core) renewHalf(m *protocol.MessageExt, origin int64, times int) (*protocol.MessageExt, error) {
	cp := *m
	cp.Properties = maps.Clone(m.Properties)
	cp.SetProperty(propTxOrigin, strconv.FormatInt(origin, 10))
	if times > 0 {
		cp.SetProperty(protocol.PropertyTransactionCheckTimes, strconv.Itoa(times))
	}
	cp.StoreHost = c.host()
	put, err := c.put([]*protocol.MessageExt{&cp})
	if err != nil {
		return nil, fmt.Errorf("core: renew half message: %w", err)
	}
	cp.QueueOffset, cp.CommitLogOffset = put[0].QueueOffset, put[0].CommitLogOffset
	cp.StoreTimestamp, cp.OffsetMsgID = put[0].StoreTimestamp, put[0].OffsetMsgID()
	return &cp, nil
}

// discardHalf ends a half's transaction without an answer: a copy goes to
// TRANS_CHECK_MAX_TIME_TOPIC (Java DefaultTransactionalMessageCheckListener
// resolveDiscardMsg) with a "discard" op, in one write.
func (c *Core) discardHalf(m *protocol.MessageExt, origin int64) error {
	for _, topic := range []string{topicTransCheckMax, topicTransOpHalf} {
		_, created, err := c.topics.createIfAbsent(newTopic(topic, 1, defaultTopicPerm))
		if err != nil {
			return err
		}
		if created {
			c.cfg.TopicsChanged(false)
		}
	}
	cp := *m
	cp.Topic, cp.QueueID = topicTransCheckMax, 0
	cp.StoreHost = c.host()
	if _, err := c.put([]*protocol.MessageExt{&cp, c.txOp(m, origin, txEndDiscard)}); err != nil {
		return fmt.Errorf("core: discard half message: %w", err)
	}
	c.log.Warn("broker: half message discarded after its checks ran out", "group", m.Property(protocol.PropertyProducerGroup),
		"topic", m.Property(protocol.PropertyRealTopic), "uniqKey", m.UniqKey(), "checks", m.Property(protocol.PropertyTransactionCheckTimes))
	return nil
}

// sendCheck sends CHECK_TRANSACTION_STATE about a renewed half to one live
// connection of its producer group, rotating among them
// (AbstractTransactionalMessageCheckListener.sendCheckMessage): the header
// names the copy, the body is the copy in the stored-message encoding with
// its real topic and queue. It reports whether a connection was found.
func (c *Core) sendCheck(m *protocol.MessageExt) bool {
	group := m.Property(protocol.PropertyProducerGroup)
	live := liveChannels(c.clients.ProducerChannels(group))
	if len(live) == 0 {
		c.log.Debug("broker: no producer online to check a transaction", "group", group, "uniqKey", m.UniqKey())
		return false
	}
	ch := live[c.txn.rr%uint64(len(live))]
	c.txn.rr++
	real := *m
	real.Topic = m.Property(protocol.PropertyRealTopic)
	if q, err := strconv.ParseInt(m.Property(protocol.PropertyRealQueueID), 10, 32); err == nil {
		real.QueueID = int32(q)
	}
	body, err := protocol.AppendStoredMessage(nil, &real)
	if err != nil {
		c.log.Error("broker: encode transaction check", "err", err)
		return false
	}
	uniq := m.UniqKey()
	hdr := protocol.CheckTransactionStateRequestHeader{
		TranStateTableOffset: m.QueueOffset, CommitLogOffset: m.CommitLogOffset,
		MsgID: uniq, TransactionID: uniq, OffsetMsgID: m.OffsetMsgID,
	}
	ch.CheckTransactionState(hdr, body)
	return true
}
