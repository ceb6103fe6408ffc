package core

import (
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// ErrNotMaster is what a Backend's Put and Apply fail with (errors.Is)
// when this node does not take writes: a replica that is not its group's
// leader, or a leader that lost its majority before the write committed
// (then the write was not acknowledged; it may or may not survive). The
// core answers it as a Java slave answers a write.
var ErrNotMaster = errors.New("core: not the master")

// Backend is what the core runs on: the store it reads and the one path
// every mutation of it takes. A single broker's backend is its store
// (LocalBackend); a replicated group's is its raft node (broker/replica),
// whose Put and Apply propose the encoded op and return once a majority
// holds it and this node applied it.
//
// The core never writes the store by any other way, so every replica of
// a group applies the same ops in the same order.
type Backend interface {
	// Store is the store to read now. A replica replaces its store when it
	// installs a snapshot, so the core fetches it per request.
	Store() *store.Store
	// Put stores msgs as (*store.Store).Put does.
	Put(msgs []*message.MessageExt) ([]store.PutResult, error)
	// Apply performs op as (*store.Store).Apply does.
	Apply(op *store.Op) (*store.ApplyResult, error)
	// IsLeader says whether mutations can succeed here now: always for a
	// single broker; for a replica, while it leads its group.
	IsLeader() bool
	// Close releases the backend (the store closes last).
	Close() error
}

// LocalBackend is a single broker's backend: its own store, written
// directly (no replication on the path).
type LocalBackend struct{ S *store.Store }

// Store returns the store.
func (b LocalBackend) Store() *store.Store { return b.S }

// Put is (*store.Store).Put.
func (b LocalBackend) Put(msgs []*message.MessageExt) ([]store.PutResult, error) {
	return b.S.Put(msgs)
}

// Apply is (*store.Store).Apply.
func (b LocalBackend) Apply(op *store.Op) (*store.ApplyResult, error) { return b.S.Apply(op) }

// IsLeader is always true: a single broker is its own master.
func (LocalBackend) IsLeader() bool { return true }

// Close closes the store.
func (b LocalBackend) Close() error { return b.S.Close() }

// store is the store to read now.
func (c *Core) store() *store.Store { return c.be.Store() }

// IsMaster says whether this core's backend takes writes now.
func (c *Core) IsMaster() bool { return c.be.IsLeader() }

// apply performs one non-append mutation through the backend.
func (c *Core) apply(op *store.Op) error {
	_, err := c.be.Apply(op)
	return c.notMaster(err)
}

// Apply performs op through the backend: the one way the broker's other
// owners of stored records (ACL 2.0's users and rules) write, so a
// replicated group's every node holds them. On a slave it fails with the
// refusal a Java slave gives a write.
func (c *Core) Apply(op *store.Op) error { return c.apply(op) }

// commitOffsets writes consumer offsets through the backend.
func (c *Core) commitOffsets(commits []store.OffsetCommit) error {
	if len(commits) == 0 {
		return nil
	}
	return c.apply(&store.Op{Kind: store.OpCommitOffset, Offsets: commits})
}

// notMaster turns a replica's refusal (not the leader, or leadership lost
// before the write committed) into what a Java slave answers a write:
// DefaultMessageStore refuses puts on a SLAVE with SERVICE_NOT_AVAILABLE,
// which SendMessageProcessor answers with this remark. Other errors pass.
func (c *Core) notMaster(err error) error {
	if err == nil || !errors.Is(err, ErrNotMaster) {
		return err
	}
	return fmt.Errorf("%w (%w)", c.serviceNotAvailable(), err)
}

// serviceNotAvailable is Java's answer to a write on a slave or on a full
// disk (SendMessageProcessor handlePutMessageResult, SERVICE_NOT_AVAILABLE),
// with its diskUtil(): one store on one filesystem here, so the commit
// log, queues and index share one ratio.
func (c *Core) serviceNotAvailable() error {
	pct, _ := c.store().DiskUsage()
	r := pct / 100
	return errorf(Unavailable,
		"service not available now. It may be caused by one of the following reasons: the broker's disk is full [CL: %5.2f CQ: %5.2f INDEX: %5.2f], messages are put to the slave, message store has been shut down, etc.", r, r, r)
}

// put stores msgs through the backend.
func (c *Core) put(msgs []*message.MessageExt) ([]store.PutResult, error) {
	res, err := c.be.Put(msgs)
	return res, c.notMaster(err)
}
