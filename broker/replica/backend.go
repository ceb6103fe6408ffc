package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/internal/periodic"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// Backend is the broker core's backend on a group's node (core.Backend):
// reads from the node's current store, every mutation proposed through
// raft (encoded, (*store.Op).Marshal) and answered once a majority holds it
// and this node applied it. Concurrent sends share one raft entry
// (appendbatch.go), and raft shares its disk write and AppendEntries round
// among the entries proposed together (the package doc, Batching).
type Backend struct {
	n       *Node
	timeout time.Duration
	appends *appendBatcher
}

var _ core.Backend = (*Backend)(nil)

// NewBackend returns the backend over n; a write waits at most
// proposeTimeout for its commit. Close shuts n down.
func NewBackend(n *Node, proposeTimeout time.Duration) *Backend {
	b := &Backend{n: n, timeout: proposeTimeout}
	b.appends = &appendBatcher{propose: b.propose}
	return b
}

// Store is the node's store now (it is replaced when a snapshot is
// installed).
func (b *Backend) Store() *store.Store { return b.n.Store() }

// IsLeader says whether this node leads its group.
func (b *Backend) IsLeader() bool { return b.n.IsLeader() }

// Close shuts the node down.
func (b *Backend) Close() error { return b.n.Shutdown() }

// Put appends msgs through the log, sharing an entry with the sends
// waiting beside it.
func (b *Backend) Put(msgs []*message.MessageExt) ([]store.PutResult, error) {
	if !b.n.IsLeader() { // before encoding anything
		return nil, mapErr(&NotLeaderError{})
	}
	op, err := b.n.Store().AppendOp(msgs)
	if err != nil {
		return nil, err
	}
	appended, err := b.appends.append(op)
	if err != nil {
		return nil, err
	}
	out := make([]store.PutResult, len(appended))
	for i, a := range appended {
		out[i] = store.PutResult{QueueOffset: a.QueueOffset, CommitLogOffset: a.PhysOffset, Size: a.Size,
			StoreTimestamp: a.StoreTimestamp, StoreHost: msgs[i].StoreHost}
	}
	return out, nil
}

// Apply proposes op alone.
func (b *Backend) Apply(op *store.Op) (*store.ApplyResult, error) { return b.propose(op) }

func (b *Backend) propose(op *store.Op) (*store.ApplyResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	res, err := b.n.Propose(ctx, op.Marshal())
	if err != nil {
		return nil, mapErr(err)
	}
	return res, nil
}

// mapErr gives the core the errors it answers: a refusal as not master
// (a slave's answer), a node shut down as a closed store.
func mapErr(err error) error {
	switch {
	case errors.Is(err, ErrNotLeader):
		return fmt.Errorf("%w: %w", core.ErrNotMaster, err)
	case errors.Is(err, ErrClosed):
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	}
	return err
}

// RetentionInterval is how often a group's master proposes retention (the
// store's own background retention is off on a replica: each truncation
// must be one op in the log, the same on every node).
const RetentionInterval = 10 * time.Second

// Retain proposes the truncations retention calls for, every
// RetentionInterval while master() says this node is its group's
// announced master, until stop is closed. The broker runs it in a
// goroutine of its own.
func (b *Backend) Retain(stop <-chan struct{}, master func() bool, now func() time.Time, log *slog.Logger) {
	periodic.Run(stop, RetentionInterval, func() {
		for master() {
			op, more, err := b.n.Store().RetentionOp(now())
			if err == nil && op != nil {
				_, err = b.propose(op)
			}
			if err != nil {
				log.Warn("broker: retention", "err", err)
			}
			if err != nil || op == nil || !more {
				return
			}
		}
	})
}
