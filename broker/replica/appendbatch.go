package replica

import (
	"sync"
	"time"

	"github.com/runnelmq/runnel/store"
)

// appendBatcher makes concurrent sends of a replicated group share one
// raft entry: an OpAppend carries its messages' topics and queues itself,
// so the appends waiting while earlier proposals are in flight go as one
// op, applied by every node in one store write. Raft already shares a
// disk write and a round trip among entries proposed together; sharing
// the entry also shares what every node pays per entry (a state machine
// apply, one store commit, one raft log record, one AppendEntries per
// follower), and on a group whose nodes share the machine's cores that is
// most of raft's cost (see docs/performance-history.md).
//
// At most one proposal is in flight, and its sender leads it: it waits
// for the batch to fill (below), proposes it, answers every call in it and,
// if more wait, hands the lead to the oldest waiting call before it returns
// its own result, so no goroutine runs but the senders' and no sender waits
// behind a round it is not in. More in flight (pipelined entries) was
// measured and lost: the same senders spread over smaller entries cost
// more CPU per message, and a group whose nodes share the cores is
// CPU-bound.
//
// Filling: the senders answered by one entry send again a moment later,
// but the first of them would find nothing in flight and go alone, the
// rest waiting a whole round for the next entry; closed-loop senders then
// settle into two cohorts taking turns, each entry carrying half of them
// (16 senders averaged 7.4 messages per entry). So when an entry is
// answered, the messages it answered plus those that queued meanwhile are
// the senders at work, and the next batch waits until that many are pending,
// for at most half the previous proposal's duration (and maxLinger): a
// lone sender never waits (it is the only one at work), and a steady set
// of senders shares one entry per round.
type appendBatcher struct {
	propose func(*store.Op) (*store.ApplyResult, error)
	// maxLinger caps the wait for a batch to fill. Default
	// appendBatchMaxLinger.
	maxLinger time.Duration
	// now times proposals (how long the next batch may wait). Default
	// time.Now.
	now func() time.Time

	mu       sync.Mutex
	pending  []*appendCall
	inflight bool
	// senders is how many messages the previous entry answered plus
	// those pending when it was answered, and lastTook how long its
	// proposal took: what the next batch waits for, and at most half of
	// how long. Messages, not calls: one call may carry the sends of many
	// senders (a run of a connection's sends, remoting/run.go), and a
	// count of calls then took two runs for the whole of the senders at
	// work, so an entry went without the part of a wave that a second read
	// delivered (3-node SYNC_FLUSH throughput 0.76x).
	senders  int
	lastTook time.Duration
	// fill, when a proposer waits for the batch to fill, is closed once
	// wantMsgs messages (or appendBatchMaxBytes) are pending.
	fill         chan struct{}
	wantMsgs     int
	pendingMsgs  int
	pendingBytes int
}

const (
	// appendBatchMaxBytes caps one combined entry (the raft log keeps it
	// whole, and followers receive it in one AppendEntries).
	appendBatchMaxBytes = 4 << 20
	// appendBatchMaxLinger caps how long a batch waits to fill, whatever
	// the previous proposal took.
	appendBatchMaxLinger = 2 * time.Millisecond
)

type appendCall struct {
	op   *store.Op
	res  []store.Appended
	err  error
	done chan struct{}
	// lead is closed when this waiting call is handed the lead.
	lead chan struct{}
}

// append proposes op (an OpAppend) together with the appends waiting
// beside it and returns where its messages went.
func (a *appendBatcher) append(op *store.Op) ([]store.Appended, error) {
	call := &appendCall{op: op, done: make(chan struct{}), lead: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, call)
	a.pendingBytes += opBytes(op)
	a.pendingMsgs += len(op.Messages)
	if a.fill != nil && (a.pendingMsgs >= a.wantMsgs || a.pendingBytes >= appendBatchMaxBytes) {
		close(a.fill)
		a.fill = nil
	}
	if a.inflight {
		a.mu.Unlock()
		select {
		case <-call.done:
			return call.res, call.err
		case <-call.lead:
		}
		a.mu.Lock()
	}
	a.inflight = true
	a.leadLocked()
	a.mu.Unlock()
	<-call.done // the lead's batch starts with its own call
	return call.res, call.err
}

// leadLocked proposes one batch, the oldest pending call first, and hands
// the lead on to the oldest call still waiting, if any. a.mu is held on
// entry and exit, released while it waits and proposes.
func (a *appendBatcher) leadLocked() {
	a.awaitFillLocked()
	batch := a.takeLocked()
	a.mu.Unlock()
	now := a.now
	if now == nil {
		now = time.Now
	}
	t0 := now()
	a.run(batch)
	took := now().Sub(t0)
	a.mu.Lock()
	// The senders answered now and those that queued meanwhile are the
	// senders at work: the next entry waits for them all.
	a.senders, a.lastTook = batchMsgs(batch)+a.pendingMsgs, took
	if len(a.pending) == 0 {
		a.inflight = false
		return
	}
	close(a.pending[0].lead)
}

// awaitFillLocked waits, a.mu released meanwhile, until as many calls are
// pending as there were senders at work at the previous entry's answer, or
// the linger runs out.
func (a *appendBatcher) awaitFillLocked() {
	if a.pendingMsgs >= a.senders || a.pendingBytes >= appendBatchMaxBytes {
		return
	}
	linger := a.lastTook / 2
	if m := a.maxLingerOrDefault(); linger > m {
		linger = m
	}
	if linger <= 0 {
		return
	}
	fill := make(chan struct{})
	a.fill, a.wantMsgs = fill, a.senders
	a.mu.Unlock()
	t := time.NewTimer(linger)
	select {
	case <-fill:
	case <-t.C:
	}
	t.Stop()
	a.mu.Lock()
	if a.fill == fill {
		a.fill = nil
	}
}

func (a *appendBatcher) maxLingerOrDefault() time.Duration {
	if a.maxLinger > 0 {
		return a.maxLinger
	}
	return appendBatchMaxLinger
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
	a.pendingBytes -= size
	a.pendingMsgs -= batchMsgs(batch)
	return batch
}

// batchMsgs is how many messages the calls of batch carry.
func batchMsgs(batch []*appendCall) int {
	n := 0
	for _, c := range batch {
		n += len(c.op.Messages)
	}
	return n
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
	if err != nil && store.RefusedOp(err) {
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
