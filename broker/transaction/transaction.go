// Package transaction owns RocketMQ's transactional messages: a half
// message's way into the half queue, END_TRANSACTION's commit or rollback,
// and the check that asks producers about halves left open. The broker's
// core wires it (broker/core/transaction.go) and calls it for
// END_TRANSACTION, half sends and the check loop; it reaches the store,
// the topic table, producer connections and delayed delivery only through
// Config, so it is tested and reasoned about alone, and never sees a wire
// (internal/lint).
//
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
//   - the check (check.go) asks producers about halves without an
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
package transaction

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// System topics of transactions (RocketMQ TopicValidator), each with one
// queue, created on first use through Config.EnsureTopic.
const (
	// HalfTopic holds half messages (RMQ_SYS_TRANS_HALF_TOPIC).
	HalfTopic = "RMQ_SYS_TRANS_HALF_TOPIC"
	// OpHalfTopic holds op messages, one per ended transaction
	// (RMQ_SYS_TRANS_OP_HALF_TOPIC).
	OpHalfTopic = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	// CheckMaxTopic receives halves whose checks ran out
	// (TRANS_CHECK_MAX_TIME_TOPIC).
	CheckMaxTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
)

// Store is the part of the message store transactions read and write;
// *store.Store implements it.
type Store interface {
	ReadRecord(phys int64) ([]byte, error)
	QueryByKeyFrom(topic, key string, maxNum int, from int64) ([][]byte, error)
	Put(msgs []*message.MessageExt) ([]store.PutResult, error)
	QueueEntry(topic string, queueID int32, offset int64) (consumequeue.Entry, error)
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	CommitOffset(group, topic string, queueID int32, offset int64) error
}

// Producer is one connection of a producer group, which the check asks
// how a transaction ended (oneway); msg is the half as a stored record.
type Producer interface {
	CheckTransactionState(c Check, msg []byte)
}

// Resolution is how a producer says its transaction ended (RocketMQ's
// TransactionType: UNKNOW, COMMIT, ROLLBACK).
type Resolution uint8

const (
	// Unknown leaves the transaction to the check.
	Unknown Resolution = iota
	Commit
	Rollback
)

// EndRequest ends one transaction (END_TRANSACTION; the gRPC door's
// EndTransaction): it names the half message by where it is stored and by
// its ids, which must agree with the half found there.
type EndRequest struct {
	ProducerGroup string
	// QueueOffset is the half's offset in the half queue
	// (tranStateTableOffset), CommitLogOffset its physical offset.
	QueueOffset, CommitLogOffset int64
	Resolution                   Resolution
	// FromCheck says the producer answers a check.
	FromCheck bool
	// MsgID is the message's UNIQ_KEY; TransactionID the producer's id of
	// the transaction (optional).
	MsgID, TransactionID string
}

// Check is what the broker tells a producer when it asks how a
// transaction ended (CHECK_TRANSACTION_STATE): where the half is stored
// and its ids.
type Check struct {
	QueueOffset, CommitLogOffset int64
	MsgID, TransactionID         string
	OffsetMsgID                  string
}

// Config wires a Service. Every func and Store is required.
type Config struct {
	Store Store
	// Offsets holds the check's progress in memory, as the consumer group
	// CID_SYS_RMQ_TRANS on the half queue; the store keeps it durable.
	Offsets *offsets.Table
	// HasTopic reports whether a topic exists.
	HasTopic func(name string) bool
	// EnsureTopic creates a system topic with one queue when it is
	// missing. Its error is returned as it is (the core's refusal).
	EnsureTopic func(name string) error
	// Producers lists the live connections of a producer group.
	Producers func(group string) []Producer
	// Delay diverts a committed message that asks for a delay (a DELAY
	// level or a timer) to where it waits; a message without one is left
	// as it is. Its error is returned as it is.
	Delay func(m *message.MessageExt) error
	// Host is the store host written into the messages transactions store.
	Host func() netip.AddrPort
	// Now is the clock ages are measured with (the store's clock).
	Now func() time.Time
	// Logger. Default: discard.
	Logger *slog.Logger
	// CheckMax is how many checks a half gets before it is discarded
	// (transactionCheckMax).
	CheckMax int
	// FileReservedTime discards halves older than it (fileReservedTime).
	FileReservedTime time.Duration
	// Timeout is the default immunity of a half: how long after its birth
	// it is left alone (transactionTimeOut).
	Timeout time.Duration
}

// Refused is END_TRANSACTION's refusal of a request that names no half of
// its producer group, or a transaction already ended the other way.
// Remark is the text Java's broker answers with (SYSTEM_ERROR).
type Refused struct{ Remark string }

func (e *Refused) Error() string { return "transaction: refused: " + e.Remark }

func refused(format string, args ...any) *Refused {
	return &Refused{Remark: fmt.Sprintf(format, args...)}
}

// Service is the broker's transaction bookkeeping; everything durable is
// in the store.
type Service struct {
	cfg Config
	log *slog.Logger
	// locks serialise the end of one transaction (END_TRANSACTION, a check
	// discarding it): look for its op, then write. Striped by origin.
	locks [lockStripes]sync.Mutex
	// checkMu serialises check passes (the loop, or a test calling Check)
	// and guards rr.
	checkMu sync.Mutex
	// rr rotates the producer connection a check goes to.
	rr uint64
}

// New returns a Service over cfg.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{cfg: cfg, log: cfg.Logger}
}

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

// lockStripes is the number of locks transactions are spread over by
// origin; ends of different transactions rarely wait for each other.
const lockStripes = 64

func (s *Service) lock(origin int64) *sync.Mutex {
	return &s.locks[uint64(origin)%lockStripes]
}

// lockEnded locks the transaction of half (an end and a check of it run
// one at a time) and returns its origin and how it ended ("" while open);
// the caller unlocks, whatever the error.
func (s *Service) lockEnded(half *message.MessageExt) (origin int64, ended string, unlock func(), err error) {
	origin = txOrigin(half)
	mu := s.lock(origin)
	mu.Lock()
	ended, err = s.ended(origin)
	return origin, ended, mu.Unlock, err
}

// IsHalfSend reports whether a send carries a transaction's half message.
// Java's SendMessageProcessor goes by TRAN_MSG; the clients also set the
// PREPARED sysFlag, which is what older Runnel checked; either counts.
func IsHalfSend(sysFlag int32, props map[string]string) bool {
	if sysFlag&message.SysFlagTransactionMask == message.SysFlagTransactionPrep {
		return true
	}
	s, ok := props[message.PropertyTransactionPrepared]
	if !ok {
		return false // most sends: and a failed ParseBool allocates its error
	}
	v, err := strconv.ParseBool(s)
	return err == nil && v
}

// ToHalf turns the message of a half send into what is stored
// (TransactionalMessageBridge.parseHalfMessageInner): the real topic and
// queue move to properties and the message goes to the half queue, its
// transaction bits cleared. It makes sure the half names its producer
// group, which END_TRANSACTION and the check need.
func (s *Service) ToHalf(group string, m *message.MessageExt) error {
	if err := s.cfg.EnsureTopic(HalfTopic); err != nil {
		return err
	}
	m.SetProperty(message.PropertyRealTopic, m.Topic)
	m.SetProperty(message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	if m.Property(message.PropertyProducerGroup) == "" {
		m.SetProperty(message.PropertyProducerGroup, group)
	}
	m.SysFlag &^= message.SysFlagTransactionMask
	m.Topic, m.QueueID = HalfTopic, 0
	return nil
}

// End ends a transaction (END_TRANSACTION, oneway from the official
// clients). UNKNOW (0) and unknown states do nothing and report
// answered false: Java leaves those to the check and does not answer.
// COMMIT and ROLLBACK check the half the request names (it must be a half
// of the request's producer group at its queue offset) and end its
// transaction once. A refusal is a *Refused; the errors of Config's funcs
// come back as they are.
func (s *Service) End(h EndRequest, client, remark string) (answered bool, err error) {
	var end string
	switch h.Resolution {
	case Commit:
		end = txEndCommit
	case Rollback:
		end = txEndRollback
	default:
		s.log.Debug("broker: end transaction with state unknown, left to the check",
			"producer", client, "group", h.ProducerGroup, "msgId", h.MsgID, "fromCheck", h.FromCheck, "remark", remark)
		return false, nil
	}
	half, err := s.lookupHalf(&h)
	if err != nil {
		return true, err
	}
	origin, prev, unlock, err := s.lockEnded(half)
	defer unlock()
	if err != nil {
		return true, fmt.Errorf("transaction: look up transaction op: %w", err)
	}
	if prev != "" {
		if prev == end {
			// The same end again (a check's answer after the producer's own,
			// a resend): already done, nothing more to store.
			return true, nil
		}
		return true, refused("the transaction of message %s has already ended: %s, cannot %s it", h.MsgID, prev, end)
	}
	msgs := []*message.MessageExt{s.op(half, origin, end)}
	if end == txEndCommit {
		final, err := s.committed(half)
		if err != nil {
			return true, err
		}
		msgs = append([]*message.MessageExt{final}, msgs...)
	}
	if err := s.cfg.EnsureTopic(OpHalfTopic); err != nil {
		return true, err
	}
	if _, err := s.cfg.Store.Put(msgs); err != nil {
		return true, err
	}
	return true, nil
}

// lookupHalf reads the half the request names and checks it against the
// request (EndTransactionProcessor.checkPrepareMessage).
func (s *Service) lookupHalf(h *EndRequest) (*message.MessageExt, error) {
	notFound := func(why string) error {
		return refused("Find prepared transaction message failed: commitLogOffset %d: %s", h.CommitLogOffset, why)
	}
	rec, err := s.cfg.Store.ReadRecord(h.CommitLogOffset)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no message there")
	}
	if err != nil {
		return nil, fmt.Errorf("transaction: read prepared transaction message: %w", err)
	}
	m, _, err := message.DecodeStoredMessage(rec, false)
	if err != nil {
		return nil, notFound(err.Error())
	}
	switch {
	case m.Topic != HalfTopic || m.Property(message.PropertyRealTopic) == "":
		return nil, notFound("not a half message")
	case m.Property(message.PropertyProducerGroup) != h.ProducerGroup:
		return nil, refused("The producer group wrong: the half message is of %q, not %q",
			m.Property(message.PropertyProducerGroup), h.ProducerGroup)
	case m.QueueOffset != h.QueueOffset:
		return nil, refused("The transaction state table offset wrong: the half message is at %d, not %d",
			m.QueueOffset, h.QueueOffset)
	}
	return m, nil
}

// txOrigin returns the commit log offset of the first copy of m's
// transaction.
func txOrigin(m *message.MessageExt) int64 {
	if v, err := strconv.ParseInt(m.Property(propTxOrigin), 10, 64); err == nil {
		return v
	}
	return m.CommitLogOffset
}

// txOpKey is the KEYS word of the op messages of a transaction.
func txOpKey(origin int64) string { return "origin:" + strconv.FormatInt(origin, 10) }

// ended returns how the transaction with this origin ended, or "" while
// it has not.
func (s *Service) ended(origin int64) (string, error) {
	// Ops are written after their origin: the lookup starts there.
	recs, err := s.cfg.Store.QueryByKeyFrom(OpHalfTopic, txOpKey(origin), 1, origin)
	if err != nil || len(recs) == 0 {
		return "", err
	}
	op, _, err := message.DecodeStoredMessage(recs[0], false)
	if err != nil {
		return "", fmt.Errorf("transaction: decode transaction op: %w", err)
	}
	if e := op.Property(propTxEnd); e != "" {
		return e, nil
	}
	return txEndCommit, nil // not expected: every op Runnel writes says how
}

// op returns the op message that ends half's transaction.
func (s *Service) op(half *message.MessageExt, origin int64, end string) *message.MessageExt {
	return &message.MessageExt{
		Message: message.Message{
			Topic: OpHalfTopic,
			Properties: map[string]string{
				message.PropertyTags: txOpTag,
				message.PropertyKeys: txOpKey(origin),
				propTxEnd:            end,
			},
			Body: []byte(strconv.FormatInt(half.QueueOffset, 10)),
		},
		BornTimestamp: s.cfg.Now().UnixMilli(),
		BornHost:      s.cfg.Host(),
		StoreHost:     s.cfg.Host(),
	}
}

// committed returns the message a commit stores
// (EndTransactionProcessor.endMessageTransaction): the half back in its
// real queue, COMMIT in its sysFlag, REAL_TOPIC and REAL_QID removed, and
// delayed if it carries a DELAY level (Java delays COMMIT messages too).
func (s *Service) committed(half *message.MessageExt) (*message.MessageExt, error) {
	topic := half.Property(message.PropertyRealTopic)
	qid, err := strconv.ParseInt(half.Property(message.PropertyRealQueueID), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("transaction: half message %s has a bad REAL_QID %q", half.OffsetMsgID, half.Property(message.PropertyRealQueueID))
	}
	props := maps.Clone(half.Properties)
	delete(props, message.PropertyRealTopic)
	delete(props, message.PropertyRealQueueID)
	delete(props, propTxOrigin)
	m := &message.MessageExt{
		Message:                   message.Message{Topic: topic, Flag: half.Flag, Properties: props, Body: half.Body},
		QueueID:                   int32(qid),
		SysFlag:                   half.SysFlag&^message.SysFlagTransactionMask | message.SysFlagTransactionComm,
		BornTimestamp:             half.BornTimestamp,
		BornHost:                  half.BornHost,
		StoreHost:                 s.cfg.Host(),
		ReconsumeTimes:            half.ReconsumeTimes,
		PreparedTransactionOffset: half.CommitLogOffset,
	}
	if err := s.cfg.Delay(m); err != nil { // a timer counts from the commit, as in Java
		return nil, err
	}
	return m, nil
}
