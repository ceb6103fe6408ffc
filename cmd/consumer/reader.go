package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
)

// Without --group the consumer reads as mqadmin's consumeMessage and
// printMsg do: it pulls every readable queue of the topic itself, from
// where --from says, and commits nothing. No consumer group comes to exist
// (no heartbeat, no offsets, no %RETRY% topic), so debugging sessions do
// not pile up in `runnelctl group list` or the brokers' metrics; the pulls
// carry RocketMQ's tools group name, as mqadmin's do.

// toolsGroup is the group name the reader's pulls carry (RocketMQ's
// MixAll.TOOLS_CONSUMER_GROUP): nothing is committed under it.
const toolsGroup = "TOOLS_CONSUMER"

// Reader timings; variables so that tests need not wait for them.
var (
	// readerHold is how long a broker may hold a pull of a caught-up queue.
	readerHold = 15 * time.Second
	// readerRecheck is how often the route is read again for queues that
	// came since (a broker joined, the topic grew).
	readerRecheck = 5 * time.Second
	// readerRetry is the pause after a failed pull.
	readerRetry = time.Second
)

// readerBatch is the most messages one pull asks for.
const readerBatch = 32

// reader pulls every queue of one topic in a goroutine per queue and hands
// each message to out, in queue order; it stops when out refuses one.
type reader struct {
	pull *client.PullConsumer
	plan plan
	out  *output
	log  *slog.Logger

	wg sync.WaitGroup
	mu struct {
		sync.Mutex
		next map[queue.MessageQueue]int64 // where each queue is read next
	}
}

func newReader(pull *client.PullConsumer, p plan, out *output, log *slog.Logger) *reader {
	r := &reader{pull: pull, plan: p, out: out, log: log}
	r.mu.next = map[queue.MessageQueue]int64{}
	return r
}

// add starts reading each queue of mqs not read yet: from where --from
// says, or from its first message with fromStart (a queue that came after
// the start holds only messages newer than the consumer). Each queue's
// start offset is placed before add returns, so that what is sent after it
// is read.
func (r *reader) add(ctx context.Context, mqs []queue.MessageQueue, fromStart bool) {
	for _, mq := range mqs {
		r.mu.Lock()
		_, known := r.mu.next[mq]
		r.mu.Unlock()
		if known {
			continue
		}
		off, err := r.startOffset(ctx, mq, fromStart)
		if err != nil {
			off = -1 // readQueue asks again
		}
		r.setNext(mq, off)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.readQueue(ctx, mq, fromStart, off)
		}()
	}
}

// run reads the queues the route adds later until ctx ends, then waits
// for every queue's goroutine.
func (r *reader) run(ctx context.Context) {
	defer r.wg.Wait()
	for pause(ctx, readerRecheck) {
		if mqs, err := r.pull.MessageQueues(ctx, r.plan.topic); err == nil {
			r.add(ctx, mqs, true)
		}
	}
}

// queues returns the queues being read, for the status line.
func (r *reader) queues() []queue.MessageQueue {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]queue.MessageQueue, 0, len(r.mu.next))
	for mq := range r.mu.next {
		out = append(out, mq)
	}
	return queue.Sorted(out)
}

// MaxOffset and CommittedOffset make the reader the status line's
// offsetSource: its "committed" offset is where it reads next.
func (r *reader) MaxOffset(ctx context.Context, mq queue.MessageQueue) (int64, error) {
	return r.pull.MaxOffset(ctx, mq)
}

func (r *reader) CommittedOffset(_ context.Context, mq queue.MessageQueue) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.mu.next[mq], 0), nil
}

func (r *reader) setNext(mq queue.MessageQueue, off int64) {
	r.mu.Lock()
	r.mu.next[mq] = off
	r.mu.Unlock()
}

// startOffset is where mq is read first.
func (r *reader) startOffset(ctx context.Context, mq queue.MessageQueue, fromStart bool) (int64, error) {
	switch {
	case fromStart || r.plan.from == offset.ConsumeFromFirstOffset:
		return r.pull.MinOffset(ctx, mq)
	case r.plan.from == offset.ConsumeFromTimestamp:
		return r.pull.OffsetForTimestamp(ctx, mq, r.plan.fromTime)
	}
	return r.pull.MaxOffset(ctx, mq)
}

// readQueue pulls mq from next (-1: not placed yet) until ctx ends or out
// takes no more.
func (r *reader) readQueue(ctx context.Context, mq queue.MessageQueue, fromStart bool, next int64) {
	opts := client.PullOptions{Expression: r.plan.expr, Wait: readerHold}
	if r.plan.sql {
		opts.ExpressionType = client.SQL92Expression
	}
	for ctx.Err() == nil {
		var err error
		if next < 0 {
			if next, err = r.startOffset(ctx, mq, fromStart); err != nil {
				next = -1
				r.failed(ctx, mq, err)
				continue
			}
			r.setNext(mq, next)
		}
		res, err := r.pull.Pull(ctx, mq, next, readerBatch, opts)
		if err != nil {
			r.failed(ctx, mq, err)
			continue
		}
		for _, m := range res.Messages {
			if !r.out.offer(m) {
				return // --max reached or stdout failed
			}
		}
		if res.Status == client.PullOffsetIllegal {
			r.log.Warn("consumer: offset out of the queue; going on where the broker says", "queue", mq.String(), "offset", next, "next", res.NextOffset)
		}
		next = res.NextOffset
		r.setNext(mq, next)
	}
}

// failed logs a failed pull or offset query (quietly when ctx ended) and
// waits before the next try.
func (r *reader) failed(ctx context.Context, mq queue.MessageQueue, err error) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return
	}
	r.log.Warn("consumer: reading a queue failed; trying again", "queue", mq.String(), "err", err)
	pause(ctx, readerRetry)
}

// pause waits d, or less when ctx ends first; it reports whether ctx is
// still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
