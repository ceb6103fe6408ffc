package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// startTimeout bounds joining the cluster: routes, heartbeat, first
// rebalance. A variable so that tests need not wait for it.
var startTimeout = 30 * time.Second

const (
	// shutdownTimeout bounds the consumer's Shutdown, which waits for the
	// listener and persists every offset.
	shutdownTimeout = 10 * time.Second
)

// stopReason says why the consumer stopped.
type stopReason int

const (
	stopNone   stopReason = iota // not stopped
	stopSignal                   // ctx ended: SIGINT or SIGTERM
	stopDone                     // --max reached or stdout failed
	stopIdle                     // --idle-timeout without a message
)

func (r stopReason) String() string {
	return [...]string{"running", "interrupted", "done", "idle"}[r]
}

// waitStop blocks until ctx ends, the output is done, or idle passes with
// no message printed (never when idle is 0). after is time.After outside
// tests.
func waitStop(ctx context.Context, o *output, idle time.Duration, after func(time.Duration) <-chan time.Time) stopReason {
	for {
		var idleC <-chan time.Time
		if idle > 0 {
			idleC = after(idle)
		}
		select {
		case <-ctx.Done():
			return stopSignal
		case <-o.done:
			return stopDone
		case <-o.activity:
			// A message: wait idle again from now.
		case <-idleC:
			return stopIdle
		}
	}
}

// session is one run of the consumer with its dependencies.
type session struct {
	plan           plan
	stdout, stderr io.Writer
	terminal       bool // stderr is a terminal: show the status line
	now            func() time.Time
}

// topicWaitPoll is how often a topic that does not exist yet is looked
// up again; a variable so that tests need not wait for it.
var topicWaitPoll = time.Second

// run consumes until a stop condition, then shuts down: with --group as a
// member of that group, every printed message's offset persisted; without
// one as a reader that commits nothing (reader.go).
//
// Exactness with a group: with --max, only the orderly listener is used.
// It refuses a message beyond the limit with OrderlySuspend, which puts it
// back in its process queue and leaves the queue's committed offset before
// it; the concurrent listener has no such answer (RetryLater sends the
// message to the group's retry topic and commits past it). With a batch
// size of one, the committed offset of every queue is then exactly one past
// the last message printed from it. Without --max, each message the
// listener sees is printed and acknowledged, and Shutdown waits for the
// call in flight, so the same holds after Ctrl-C or the idle timeout.
func (s *session) run(ctx context.Context) error {
	p := s.plan
	logger := slog.New(slog.NewTextHandler(s.stderr, &slog.HandlerOptions{Level: p.logLevel}))
	ccfg := client.DefaultClientConfig()
	ccfg.NameServerAddrs = p.namesrvs
	ccfg.Credentials = p.creds
	ccfg.Logger = logger
	ccfg.TLS, ccfg.TLSCAFile = p.tls, p.tlsCA

	s.describe()
	startCtx, cancelStart := context.WithTimeout(ctx, startTimeout)
	defer cancelStart()

	pcfg := client.DefaultPullConsumerConfig()
	pcfg.Client, pcfg.Group = ccfg, p.group
	if p.group == "" {
		pcfg.Group = toolsGroup
	}
	pull, err := client.NewPullConsumer(pcfg)
	if err != nil {
		return err
	}
	if err := pull.Start(startCtx); err != nil {
		return startError(ctx, err)
	}
	defer func() { _ = pull.Shutdown(context.Background()) }()
	mqs, appeared, reason, err := s.waitForTopic(ctx, pull)
	if err != nil {
		return startError(ctx, err)
	}
	if reason != stopNone {
		s.summary(reason, nil, offsetsText(nil, p, false))
		return nil
	}
	if len(mqs) == 0 {
		return noReadableQueue(p.topic)
	}
	if appeared && p.from == offset.ConsumeFromLastOffset {
		// Everything in a topic that did not exist when the consumer
		// started is newer than the consumer: "last" is its beginning.
		fmt.Fprintf(s.stderr, "consumer: reading %s from its first message: all of it is newer than this consumer\n", p.topic)
		s.plan.from, s.plan.fromText = offset.ConsumeFromFirstOffset, "first"
		p = s.plan
	}

	var status io.Writer // the live status line goes to a terminal only
	if s.terminal {
		status = s.stderr
	}
	out := newOutput(s.stdout, status, p.json, p.max, time.Local)
	if p.group == "" {
		return s.read(ctx, pull, mqs, out, logger)
	}

	cancelStart()
	startCtx, cancelStart = context.WithTimeout(ctx, startTimeout)
	defer cancelStart()
	place := false
	if !p.broadcast {
		// A group without offsets gets --from exactly: the help promises
		// it, and RocketMQ's rule would start a young topic at 0.
		fresh, err := hasNoOffsets(startCtx, p)
		if err == nil && fresh {
			place = true
			fmt.Fprintf(s.stderr, "consumer: group %s has no offsets on %s yet: starting it at --from %s\n", p.group, p.topic, p.fromText)
		}
	}
	if place {
		if err := placeStart(startCtx, pull, p); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			logger.Warn("consumer: could not set the new group's start offsets; --from follows the broker's rules for new groups", "err", err)
		}
	}

	cfg := s.consumerConfig(ccfg, p, out)
	c, err := client.NewPushConsumer(cfg)
	if err != nil {
		return err
	}
	sel := client.TagSelector(p.expr)
	if p.sql {
		sel = client.SQL92Selector(p.expr)
	}
	if err := c.SubscribeSelector(p.topic, sel); err != nil {
		return err
	}
	if err := c.Start(startCtx); err != nil {
		_ = c.Shutdown(context.Background())
		return startError(ctx, err)
	}
	cancelStart()
	queues := 0
	for _, mq := range c.Assigned() {
		if mq.Topic == p.topic {
			queues++
		}
	}
	fmt.Fprintf(s.stderr, "consumer: consuming %s of %s\n", plural(queues, "queue", "queues"), p.topic)

	stopStatus := s.startStatus(ctx, out, c.Assigned, pull)
	reason = waitStop(ctx, out, p.idle, time.After)

	// Stop in this order: the status line (it reads from the brokers), then
	// the consumer (waits for the listener, persists offsets, unlocks,
	// unregisters), then the pull consumer (deferred).
	stopStatus()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	serr := c.Shutdown(sctx)
	s.summary(reason, out, offsetsText(serr, p, true))
	return errors.Join(outErr(out), serr)
}

// read is run without a group: the reader prints the topic's messages
// until a stop condition, committing nothing.
func (s *session) read(ctx context.Context, pull *client.PullConsumer, mqs []queue.MessageQueue, out *output, logger *slog.Logger) error {
	p := s.plan
	r := newReader(pull, p, out, logger)
	rctx, stopReading := context.WithCancel(ctx)
	r.add(rctx, mqs, false)
	fmt.Fprintf(s.stderr, "consumer: reading %s of %s\n", plural(len(mqs), "queue", "queues"), p.topic)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(rctx)
	}()
	stopStatus := s.startStatus(ctx, out, r.queues, r)
	reason := waitStop(ctx, out, p.idle, time.After)
	// The status line reads the reader's positions: it stops first.
	stopStatus()
	stopReading()
	<-done
	s.summary(reason, out, offsetsText(nil, p, true))
	return outErr(out)
}

// waitForTopic returns the topic's readable queues. A topic that does not
// exist yet is waited for, said once on stderr: a test run often starts
// the consumer before the producer that creates the topic. appeared says
// it was waited for. A stop condition met while waiting (Ctrl-C, the idle
// timeout) is returned as its reason.
func (s *session) waitForTopic(ctx context.Context, pull *client.PullConsumer) (mqs []queue.MessageQueue, appeared bool, reason stopReason, err error) {
	p := s.plan
	deadline := time.Now().Add(p.idle) // for --idle-timeout
	for {
		callCtx, cancel := context.WithTimeout(ctx, startTimeout)
		mqs, err = pull.MessageQueues(callCtx, p.topic)
		cancel()
		switch {
		case err == nil:
			if appeared {
				fmt.Fprintf(s.stderr, "consumer: topic %s appeared\n", p.topic)
			}
			return mqs, appeared, stopNone, nil
		case ctx.Err() != nil:
			return nil, appeared, stopSignal, nil
		case !errors.Is(err, client.ErrTopicNotExist):
			return nil, appeared, stopNone, routeError(p, err)
		case !appeared:
			appeared = true
			fmt.Fprintf(s.stderr, "consumer: topic %s does not exist yet; waiting for it (Ctrl-C to stop)\n", p.topic)
		}
		wait := topicWaitPoll
		if p.idle > 0 {
			if wait = min(wait, time.Until(deadline)); wait <= 0 {
				return nil, appeared, stopIdle, nil
			}
		}
		if !pause(ctx, wait) {
			return nil, appeared, stopSignal, nil
		}
	}
}

// startStatus shows the live status line on a terminal until the returned
// function is called.
func (s *session) startStatus(ctx context.Context, out *output, assigned func() []queue.MessageQueue, offsets offsetSource) (stop func()) {
	if !s.terminal {
		return func() {}
	}
	statusCtx, cancel := context.WithCancel(ctx)
	name := s.plan.group
	if name == "" {
		name = "no group"
	}
	st := newStatusLine(out, name, assigned, offsets, s.now)
	tick := time.NewTicker(statusInterval)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer tick.Stop()
		st.run(statusCtx, tick.C)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// summary is the last line on stderr: why the consumer stopped, how many
// messages it printed (out is nil when it stopped before reading) and what
// became of their offsets.
func (s *session) summary(reason stopReason, out *output, offsets string) {
	why, n := reason.String(), 0
	if out != nil {
		n = out.count()
	}
	switch {
	case reason == stopIdle:
		why = fmt.Sprintf("idle for %v", s.plan.idle)
	case reason == stopDone && out.limitReached():
		why = fmt.Sprintf("reached --max %d", s.plan.max)
	case reason == stopDone && errors.Is(out.err(), syscall.EPIPE):
		why = "stdout closed"
	case reason == stopDone:
		why = "stdout failed"
	}
	fmt.Fprintf(s.stderr, "consumer: stopped (%s) after %s; %s\n", why, plural(n, "message", "messages"), offsets)
}

// outErr is why stdout failed, nil when it did not or the reader went away
// (consumer | head): a normal end.
func outErr(out *output) error {
	if err := out.err(); !errors.Is(err, syscall.EPIPE) {
		return err
	}
	return nil
}

// offsetsText says what became of the offsets: err is the group
// consumer's Shutdown's, consumed whether it ran.
func offsetsText(err error, p plan, consumed bool) string {
	switch {
	case p.group == "":
		return "no offsets committed (read without a group)"
	case !consumed:
		return "group " + p.group + " offsets untouched"
	case err != nil:
		return "group " + p.group + " offsets may not be persisted"
	case p.broadcast:
		return "group " + p.group + " offsets persisted locally"
	}
	return "group " + p.group + " offsets committed"
}

// describe tells the user, on stderr, how the topic is read.
func (s *session) describe() {
	p := s.plan
	limit := ""
	if p.max > 0 {
		limit = fmt.Sprintf(", max %d", p.max)
	}
	filter := "tag " + p.expr
	if p.sql {
		filter = "sql " + p.expr
	}
	if p.group == "" {
		fmt.Fprintf(s.stderr, "consumer: no group (nothing committed; --group G consumes as a member of G); topic %s, %s, from %s%s\n",
			p.topic, filter, p.fromText, limit)
		return
	}
	mode := "clustering"
	if p.broadcast {
		mode = "broadcasting"
	}
	if p.orderly {
		mode += ", orderly"
	}
	fmt.Fprintf(s.stderr, "consumer: group %s; topic %s, %s, from %s, %s%s\n",
		p.group, p.topic, filter, p.fromText, mode, limit)
}

// consumerConfig builds the group consumer's config around out, for p
// (the plan, its start possibly moved by waitForTopic).
func (s *session) consumerConfig(ccfg client.ClientConfig, p plan, out *output) client.PushConsumerConfig {
	cfg := client.DefaultPushConsumerConfig()
	cfg.Client = ccfg
	cfg.Group = p.group
	cfg.ConsumeFrom = p.from
	cfg.ConsumeTimestamp = p.fromTime
	// One message per listener call and one call at a time: printing is
	// serialised anyway, and a batch of one makes every acknowledgement
	// exactly one printed message.
	cfg.ConsumeBatchSize = 1
	cfg.ConsumeGoroutines = 1
	if p.broadcast {
		cfg.Model = client.Broadcasting
	}
	if p.orderly {
		cfg.Orderly = func(_ context.Context, msgs []*client.MessageExt) client.OrderlyResult {
			for _, m := range msgs {
				if !out.offer(m) {
					// Not printed: back into the queue, not committed.
					return client.OrderlySuspend
				}
			}
			return client.OrderlySuccess
		}
	} else {
		cfg.Concurrently = func(_ context.Context, msgs []*client.MessageExt) client.ConsumeResult {
			for _, m := range msgs {
				if !out.offer(m) {
					// Only when stdout failed: let the group get it again.
					return client.ConsumeRetryLater
				}
			}
			return client.ConsumeSuccess
		}
	}
	return cfg
}

// placeStart commits a new group's offset of every queue of the topic
// where --from says. Brokers start a group without offsets at 0
// whenever a queue still holds its first message, whatever its
// consume-from setting (RocketMQ's rule, kept by Runnel); a debugging
// consumer asked for "last" must not replay history, so the offsets are
// set before the consumer starts.
func placeStart(ctx context.Context, pull *client.PullConsumer, p plan) error {
	mqs, err := pull.MessageQueues(ctx, p.topic)
	if err != nil {
		return err
	}
	for _, mq := range mqs {
		var off int64
		switch p.from {
		case offset.ConsumeFromFirstOffset:
			off, err = pull.MinOffset(ctx, mq)
		case offset.ConsumeFromTimestamp:
			off, err = pull.OffsetForTimestamp(ctx, mq, p.fromTime)
		default:
			off, err = pull.MaxOffset(ctx, mq)
		}
		if err != nil {
			return err
		}
		if err := pull.CommitOffset(ctx, mq, off); err != nil {
			return err
		}
	}
	return nil
}

// noReadableQueue explains a topic that cannot be consumed: its route has
// queues, none of them readable.
func noReadableQueue(topic string) error {
	why := "its perm on every broker lacks R (runnelctl topic route " + topic + " shows it; runnelctl topic update-perm " + topic + " --perm RW changes it)"
	if strings.HasPrefix(topic, "%DLQ%") {
		why = "RocketMQ before 4.7 creates dead-letter topics write-only (perm W); runnelctl topic update-perm '" + topic + "' --perm RW makes it readable"
	}
	return fmt.Errorf("topic %s has no readable queue: %s", topic, why)
}

// hasNoOffsets reports whether p's group neither holds offsets on the
// topic nor subscribes to it on any broker (QUERY_TOPIC_CONSUME_BY_WHO).
// Asking for the offsets themselves cannot tell: a broker answers 0 for a
// group without an offset on a queue that still holds its first message.
func hasNoOffsets(ctx context.Context, p plan) (bool, error) {
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = p.namesrvs
	cfg.TLS, cfg.TLSCAFile = p.tls, p.tlsCA
	adm, err := admin.New(cfg)
	if err != nil {
		return false, err
	}
	defer adm.Close()
	groups, err := adm.TopicConsumers(ctx, p.topic)
	if err != nil {
		return false, err
	}
	return !slices.Contains(groups, p.group), nil
}

// plural is "1 queue" or "2 queues".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// routeError says in the user's terms why the topic's route could not be
// had: a name server that never answered, or answered in another protocol
// (an HTTP server on that port), is named as such instead of by the
// transport's "remoting: timeout: code 105 ...".
func routeError(p plan, err error) error {
	ns := strings.Join(p.namesrvs, ";")
	switch {
	case errors.Is(err, remoting.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("topic %s: no answer from name server %s within %v (is one running there? -n or NAMESRV_ADDR sets it)", p.topic, ns, startTimeout)
	case errors.Is(err, protocol.ErrFrameTooLarge) || errors.Is(err, protocol.ErrFrameTooShort) || errors.Is(err, protocol.ErrBadHeader):
		return fmt.Errorf("topic %s: %s is not a RocketMQ name server (it answered in another protocol)", p.topic, ns)
	}
	return fmt.Errorf("topic %s: %w", p.topic, err)
}

// startError reports a failure to start; an interrupt while starting is a
// clean stop, not an error.
func startError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
