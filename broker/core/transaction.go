package core

import (
	"errors"

	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/store/consumequeue"
)

// The core's side of transactional messages: package broker/transaction
// owns their behaviour (the half queue, END_TRANSACTION, the check) and
// reaches the store, the topic table, producer connections and delayed
// delivery through the funcs wired here. What the core adds is its own
// vocabulary: refusals become *Error, store failures the send path's.

// newTransactions wires the transaction service over the core's store and
// tables; Open calls it once the store is open.
func (c *Core) newTransactions() *transaction.Service {
	return transaction.New(transaction.Config{
		Store:   txStore{c: c},
		Offsets: c.offsets,
		HasTopic: func(name string) bool {
			_, ok := c.topics.get(name)
			return ok
		},
		EnsureTopic: c.ensureTxTopic,
		Producers: func(group string) []transaction.Producer {
			live := liveChannels(c.clients.ProducerChannels(group))
			out := make([]transaction.Producer, len(live))
			for i, ch := range live {
				out[i] = ch
			}
			return out
		},
		Delay: func(m *message.MessageExt) error {
			if schedulable(m.SysFlag) && !c.delayLevels().Transform(m) {
				return c.divertTimer(m) // a timer counts from the commit, as in Java
			}
			return nil
		},
		Host:             c.host,
		Now:              c.cfg.Now,
		Logger:           c.log,
		CheckMax:         c.cfg.TransactionCheckMax,
		FileReservedTime: c.cfg.FileReservedTime,
		Timeout:          c.cfg.TransactionTimeout,
	})
}

// txStore is the store as transactions use it: reads from the store the
// backend holds now (a replica replaces its store when it installs a
// snapshot), writes through the backend, so a replicated group's new
// master sees every half and op; a failed Put is the refusal a send gets
// for the same failure.
type txStore struct{ c *Core }

func (s txStore) ReadRecord(phys int64) ([]byte, error) { return s.c.store().ReadRecord(phys) }
func (s txStore) QueryByKeyFrom(topic, key string, maxNum int, from int64) ([][]byte, error) {
	return s.c.store().QueryByKeyFrom(topic, key, maxNum, from)
}
func (s txStore) QueueEntry(topic string, queueID int32, offset int64) (consumequeue.Entry, error) {
	return s.c.store().QueueEntry(topic, queueID, offset)
}
func (s txStore) MinOffset(topic string, queueID int32) int64 {
	return s.c.store().MinOffset(topic, queueID)
}
func (s txStore) MaxOffset(topic string, queueID int32) int64 {
	return s.c.store().MaxOffset(topic, queueID)
}
func (s txStore) CommitOffset(group, topic string, queueID int32, offset int64) error {
	return s.c.commitOffsets([]store.OffsetCommit{{Group: group, Topic: topic, QueueID: queueID, Offset: offset}})
}

func (s txStore) Put(msgs []*message.MessageExt) ([]store.PutResult, error) {
	res, err := s.c.put(msgs)
	if err != nil {
		return nil, s.c.putError(err)
	}
	return res, nil
}

// isHalfSend reports whether a send carries a transaction's half message.
func isHalfSend(sysFlag int32, props map[string]string) bool {
	return transaction.IsHalfSend(sysFlag, props)
}

// toHalf turns the message of a half send into what is stored in the half
// queue.
func (c *Core) toHalf(group string, m *message.MessageExt) error { return c.txn.ToHalf(group, m) }

// ensureTxTopic creates a transaction system topic on first use, with one
// queue, as Java's bridge does (selectTopicConfig).
func (c *Core) ensureTxTopic(name string) error {
	_, created, err := c.topics.createIfAbsent(newTopic(name, 1, defaultTopicPerm))
	if err != nil {
		return errorf(Internal, "create topic %s: %v", name, err)
	}
	if created {
		c.log.Info("broker: transaction topic created", "topic", name)
		c.cfg.TopicsChanged(false)
	}
	return nil
}

// EndTransaction ends a transaction (END_TRANSACTION): see
// transaction.Service.End. UNKNOW and unknown states report answered
// false.
func (c *Core) EndTransaction(h transaction.EndRequest, client, remark string) (answered bool, err error) {
	answered, err = c.txn.End(h, client, remark)
	return answered, txError(err)
}

// txError is the refusal a transaction's failure is answered with:
// SYSTEM_ERROR with Java's remark, unless it already is one.
func txError(err error) error {
	var e *Error
	var r *transaction.Refused
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.As(err, &r):
		return refuse(TransactionRefused, r.Remark)
	default:
		return errorf(Internal, "%v", err)
	}
}

// CheckTransactions runs one transaction check pass now, with the core's
// clock; a Drain ends it early. The loop runs it every
// TransactionCheckInterval; tests call it after moving their clock.
func (c *Core) CheckTransactions() (transaction.CheckResult, error) { return c.txn.Check(c.stop) }

// txCheckTick runs a check pass (every TransactionCheckInterval).
func (c *Core) txCheckTick() {
	if !c.be.IsLeader() {
		return // a slave's halves are its master's to check
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
