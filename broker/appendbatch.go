package broker

import (
	"errors"
	"sync"

	"github.com/runnelmq/runnel/store"
)

// appendBatcher makes concurrent sends of a replicated group share one
// raft entry: an OpAppend carries its messages' topics and queues itself,
// so the appends waiting while earlier proposals are in flight go as one
// op, applied by every node in one store write. Raft already shares a
// disk write and a round trip among entries proposed together; sharing
// the entry also shares the state machine's apply, which runs one entry at
// a time. Each send still gets its own offsets back, in its own order.
//
// At most maxInflight proposals are in flight; the one whose proposal
// returns takes what waits next, so no goroutine runs but the senders'.
type appendBatcher struct {
	propose func(*store.Op) (*store.ApplyResult, error)

	mu       sync.Mutex
	pending  []*appendCall
	inflight int
}

const (
	appendBatchInflight = 1
	// appendBatchMaxBytes caps one combined entry (the raft log keeps it
	// whole, and followers receive it in one AppendEntries).
	appendBatchMaxBytes = 4 << 20
)

type appendCall struct {
	op   *store.Op
	res  []store.Appended
	err  error
	done chan struct{}
}

// append proposes op (an OpAppend) together with the appends waiting
// beside it and returns where its messages went.
func (a *appendBatcher) append(op *store.Op) ([]store.Appended, error) {
	call := &appendCall{op: op, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, call)
	if a.inflight >= appendBatchInflight {
		a.mu.Unlock()
		<-call.done
		return call.res, call.err
	}
	a.inflight++
	for {
		batch := a.takeLocked()
		a.mu.Unlock()
		a.run(batch)
		a.mu.Lock()
		if len(a.pending) == 0 {
			break
		}
	}
	a.inflight--
	a.mu.Unlock()
	<-call.done // answered by this goroutine's own run, or another's
	return call.res, call.err
}

// takeLocked takes the waiting calls, up to appendBatchMaxBytes (at least
// one).
func (a *appendBatcher) takeLocked() []*appendCall {
	n, size := 0, 0
	for n < len(a.pending) {
		b := opBytes(a.pending[n].op)
		if n > 0 && size+b > appendBatchMaxBytes {
			break
		}
		size += b
		n++
	}
	batch := a.pending[:n:n]
	a.pending = append([]*appendCall(nil), a.pending[n:]...)
	return batch
}

func opBytes(op *store.Op) int {
	n := 0
	for _, m := range op.Messages {
		n += len(m.Record)
	}
	return n
}

// run proposes the batch as one op and answers every call in it. If the
// store refuses the combined op as invalid (one bad message), each call is
// proposed alone, so only the bad one fails.
func (a *appendBatcher) run(batch []*appendCall) {
	if len(batch) == 1 {
		a.single(batch[0])
		return
	}
	op := &store.Op{Kind: store.OpAppend}
	for _, c := range batch {
		op.Timestamp = max(op.Timestamp, c.op.Timestamp)
		op.Messages = append(op.Messages, c.op.Messages...)
	}
	res, err := a.propose(op)
	if err != nil && (errors.Is(err, store.ErrInvalidOp) || errors.Is(err, store.ErrBadOp)) {
		for _, c := range batch {
			a.single(c)
		}
		return
	}
	i := 0
	for _, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.res = res.Appended[i : i+len(c.op.Messages)]
			i += len(c.op.Messages)
		}
		close(c.done)
	}
}

func (a *appendBatcher) single(c *appendCall) {
	res, err := a.propose(c.op)
	if err != nil {
		c.err = err
	} else {
		c.res = res.Appended
	}
	close(c.done)
}
