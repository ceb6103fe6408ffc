package transaction

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/message"
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

// CheckResult says what one check pass did.
type CheckResult struct {
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

// txProgressKey is where the check pass keeps its progress.
var txProgressKey = offsets.Key{Group: txCheckGroup, Topic: HalfTopic, QueueID: 0}

// Check runs one check pass now, with the configured clock. The broker's
// loop calls it every TransactionCheckInterval; tests call it after moving
// their clock. A store error ends the pass early, and so does stop closing;
// the halves not yet done are taken again by the next pass.
func (s *Service) Check(stop <-chan struct{}) (CheckResult, error) {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	var res CheckResult
	if !s.cfg.HasTopic(HalfTopic) {
		return res, nil // no half message was ever sent
	}
	st := s.cfg.Store
	start, _ := s.cfg.Offsets.Get(txProgressKey)
	off := max(start, st.MinOffset(HalfTopic, 0))
	end := st.MaxOffset(HalfTopic, 0) // renewed copies land past it
	now := s.cfg.Now()
	var err error
scan:
	for ; off < end; off++ {
		select {
		case <-stop:
			break scan
		default:
		}
		var m *message.MessageExt
		m, err = s.readHalf(off)
		if errors.Is(err, store.ErrNotFound) {
			err = nil
			if mo := st.MinOffset(HalfTopic, 0); mo > off+1 {
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
		var done bool
		if done, err = s.checkHalf(m, now, &res); err != nil || done {
			break
		}
	}
	res.Progress = off
	if off != start {
		s.cfg.Offsets.Commit(txProgressKey, off)
		if perr := st.CommitOffset(txProgressKey.Group, txProgressKey.Topic, 0, off); perr != nil && err == nil {
			err = fmt.Errorf("transaction: write check progress: %w", perr)
		}
	}
	return res, err
}

// readHalf reads the half at a queue offset; nil (logged) when the record
// does not decode.
func (s *Service) readHalf(off int64) (*message.MessageExt, error) {
	e, err := s.cfg.Store.QueueEntry(HalfTopic, 0, off)
	if err != nil {
		return nil, err
	}
	rec, err := s.cfg.Store.ReadRecord(e.PhysOffset)
	if err != nil {
		return nil, err
	}
	m, _, err := message.DecodeStoredMessage(rec, false)
	if err != nil {
		s.log.Error("broker: undecodable half message skipped", "queueOffset", off, "err", err)
		return nil, nil
	}
	return m, nil
}

// checkHalf handles one half of a pass; stop ends the pass before it.
func (s *Service) checkHalf(m *message.MessageExt, now time.Time, res *CheckResult) (stop bool, err error) {
	origin, ended, unlock, err := s.lockEnded(m)
	defer unlock()
	if err != nil {
		return false, err
	}
	if ended != "" {
		res.Ended++
		return false, nil
	}
	times, _ := strconv.Atoi(m.Property(message.PropertyTransactionCheckTimes))
	age := now.UnixMilli() - m.BornTimestamp
	if times >= s.cfg.CheckMax || age > s.cfg.FileReservedTime.Milliseconds() {
		res.Discarded++
		return false, s.discardHalf(m, origin)
	}
	immunity, own := s.immunity(m)
	if age >= 0 && age < immunity.Milliseconds() {
		if !own {
			return true, nil
		}
		res.Deferred++
		_, err := s.renewHalf(m, origin, times)
		return false, err
	}
	renewed, err := s.renewHalf(m, origin, times+1)
	if err != nil {
		return false, err
	}
	res.Checked++
	if s.sendCheck(renewed) {
		res.Sent++
	}
	return false, nil
}

// immunity returns how long after its birth a half is left alone, and
// whether the half set it itself (Java getImmunityTime: seconds, -1 or
// unparsable meaning Config.Timeout).
func (s *Service) immunity(m *message.MessageExt) (time.Duration, bool) {
	v := m.Property(message.PropertyCheckImmunityTimeInSecs)
	if v == "" {
		return s.cfg.Timeout, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == -1 {
		return s.cfg.Timeout, true
	}
	return time.Duration(n) * time.Second, true
}

// renewHalf re-puts a half at the end of the half queue, naming its origin
// and with TRANSACTION_CHECK_TIMES set to times (when > 0), and returns the
// copy as stored.
func (s *Service) renewHalf(m *message.MessageExt, origin int64, times int) (*message.MessageExt, error) {
	cp := *m
	cp.Properties = maps.Clone(m.Properties)
	cp.SetProperty(propTxOrigin, strconv.FormatInt(origin, 10))
	if times > 0 {
		cp.SetProperty(message.PropertyTransactionCheckTimes, strconv.Itoa(times))
	}
	cp.StoreHost = s.cfg.Host()
	put, err := s.cfg.Store.Put([]*message.MessageExt{&cp})
	if err != nil {
		return nil, fmt.Errorf("transaction: renew half message: %w", err)
	}
	cp.QueueOffset, cp.CommitLogOffset = put[0].QueueOffset, put[0].CommitLogOffset
	cp.StoreTimestamp, cp.OffsetMsgID = put[0].StoreTimestamp, put[0].OffsetMsgID()
	return &cp, nil
}

// discardHalf ends a half's transaction without an answer: a copy goes to
// TRANS_CHECK_MAX_TIME_TOPIC (Java DefaultTransactionalMessageCheckListener
// resolveDiscardMsg) with a "discard" op, in one write.
func (s *Service) discardHalf(m *message.MessageExt, origin int64) error {
	for _, topic := range []string{CheckMaxTopic, OpHalfTopic} {
		if err := s.cfg.EnsureTopic(topic); err != nil {
			return err
		}
	}
	cp := *m
	cp.Topic, cp.QueueID = CheckMaxTopic, 0
	cp.StoreHost = s.cfg.Host()
	if _, err := s.cfg.Store.Put([]*message.MessageExt{&cp, s.op(m, origin, txEndDiscard)}); err != nil {
		return fmt.Errorf("transaction: discard half message: %w", err)
	}
	s.log.Warn("broker: half message discarded after its checks ran out", "group", m.Property(message.PropertyProducerGroup),
		"topic", m.Property(message.PropertyRealTopic), "uniqKey", m.UniqKey(), "checks", m.Property(message.PropertyTransactionCheckTimes))
	return nil
}

// sendCheck sends CHECK_TRANSACTION_STATE about a renewed half to one live
// connection of its producer group, rotating among them
// (AbstractTransactionalMessageCheckListener.sendCheckMessage): the header
// names the copy, the body is the copy in the stored-message encoding with
// its real topic and queue. It reports whether a connection was found.
func (s *Service) sendCheck(m *message.MessageExt) bool {
	group := m.Property(message.PropertyProducerGroup)
	live := s.cfg.Producers(group)
	if len(live) == 0 {
		s.log.Debug("broker: no producer online to check a transaction", "group", group, "uniqKey", m.UniqKey())
		return false
	}
	ch := live[s.rr%uint64(len(live))]
	s.rr++
	real := *m
	real.Topic = m.Property(message.PropertyRealTopic)
	if q, err := strconv.ParseInt(m.Property(message.PropertyRealQueueID), 10, 32); err == nil {
		real.QueueID = int32(q)
	}
	body, err := message.AppendStoredMessage(nil, &real)
	if err != nil {
		s.log.Error("broker: encode transaction check", "err", err)
		return false
	}
	uniq := m.UniqKey()
	hdr := Check{
		QueueOffset: m.QueueOffset, CommitLogOffset: m.CommitLogOffset,
		MsgID: uniq, TransactionID: uniq, OffsetMsgID: m.OffsetMsgID,
	}
	ch.CheckTransactionState(hdr, body)
	return true
}
