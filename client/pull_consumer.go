package client

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// PullConsumerConfig configures a PullConsumer.
type PullConsumerConfig struct {
	Client ClientConfig
	// Group is the consumer group whose offsets CommittedOffset and
	// CommitOffset read and write. Default "DEFAULT_CONSUMER".
	Group string
}

// DefaultPullConsumerConfig returns the defaults; Client.NameServerAddrs
// must still be set.
func DefaultPullConsumerConfig() PullConsumerConfig {
	return PullConsumerConfig{Client: DefaultClientConfig(), Group: "DEFAULT_CONSUMER"}
}

// PullStatus is the outcome of a Pull (an enum shaped like SendStatus, with
// Java's PullStatus names).
type PullStatus int

const (
	// PullFound: Messages holds at least one message.
	PullFound PullStatus = iota
	// PullNoNewMessage: nothing at the offset (yet).
	PullNoNewMessage
	// PullNoMatchedMessage: messages were there but none matched the
	// expression; continue at NextOffset.
	PullNoMatchedMessage
	// PullOffsetIllegal: the offset is outside the queue; NextOffset is
	// where the broker suggests continuing.
	PullOffsetIllegal
)

func (s PullStatus) String() string {
	return [...]string{"FOUND", "NO_NEW_MSG", "NO_MATCHED_MSG", "OFFSET_ILLEGAL"}[s]
}

// PullResult is the answer to one Pull.
type PullResult struct {
	Status                           PullStatus
	NextOffset, MinOffset, MaxOffset int64
	Messages                         []*MessageExt
}

// PullOptions refine a Pull.
type PullOptions struct {
	// Expression is the tag expression or, with ExpressionType
	// SQL92Expression, the SQL92 condition. Default "*" (tags).
	Expression string
	// ExpressionType says how Expression is read. Default TagExpression.
	ExpressionType ExpressionType
	// Wait lets the broker hold the pull this long when nothing is there
	// (long polling). Default 0: answer at once.
	Wait time.Duration
}

// PullConsumer reads queues explicitly, for tools and tests: no rebalance,
// no offset bookkeeping unless asked.
type PullConsumer struct {
	cfg PullConsumerConfig
	mu  sync.Mutex
	in  *instance
	off bool // shut down
}

// NewPullConsumer validates cfg.
func NewPullConsumer(cfg PullConsumerConfig) (*PullConsumer, error) {
	if cfg.Group == "" {
		cfg.Group = DefaultPullConsumerConfig().Group
	}
	if err := validateGroup("Group", cfg.Group); err != nil {
		return nil, err
	}
	if err := cfg.Client.ensureDefaults(); err != nil {
		return nil, err
	}
	return &PullConsumer{cfg: cfg}, nil
}

// Start joins the client instance.
func (pc *PullConsumer) Start(ctx context.Context) error {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.off {
		return ErrClosed
	}
	if pc.in != nil {
		return nil
	}
	in, err := acquireInstance(pc.cfg.Client)
	if err != nil {
		return err
	}
	pc.in = in
	return ctx.Err()
}

// Shutdown leaves the client instance.
func (pc *PullConsumer) Shutdown(context.Context) error {
	pc.mu.Lock()
	in := pc.in
	pc.in, pc.off = nil, true
	pc.mu.Unlock()
	if in != nil {
		in.release()
	}
	return nil
}

func (pc *PullConsumer) instance() (*instance, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	switch {
	case pc.off:
		return nil, ErrClosed
	case pc.in == nil:
		return nil, ErrNotStarted
	}
	return pc.in, nil
}

// MessageQueues returns topic's readable queues, from a fresh route.
func (pc *PullConsumer) MessageQueues(ctx context.Context, topic string) ([]queue.MessageQueue, error) {
	in, err := pc.instance()
	if err != nil {
		return nil, err
	}
	r, err := in.updateRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	return queue.Sorted(r.subscribe), nil
}

// Pull reads up to max messages of mq from off.
func (pc *PullConsumer) Pull(ctx context.Context, mq queue.MessageQueue, off int64, max int, opts PullOptions) (PullResult, error) {
	in, err := pc.instance()
	if err != nil {
		return PullResult{}, err
	}
	if max <= 0 {
		return PullResult{}, fmt.Errorf("%w: max %d, want > 0", ErrBadConfig, max)
	}
	sub, err := MessageSelector{Type: opts.ExpressionType, Expression: opts.Expression}.subscription(mq.Topic)
	if err != nil {
		return PullResult{}, err
	}
	if _, err := in.route(ctx, mq.Topic); err != nil {
		return PullResult{}, err
	}
	res, err := pullRPC(ctx, in, pc.cfg.Group, mq, off, max, &sub, true, opts.Wait, 0)
	if err != nil {
		return PullResult{}, err
	}
	out := PullResult{NextOffset: res.next, MinOffset: res.minOffset, MaxOffset: res.maxOffset}
	switch res.code {
	case protocol.RespSuccess:
		out.Status = PullFound
		if len(res.msgs) == 0 {
			out.Status = PullNoMatchedMessage
			break
		}
		out.Messages = exts(toExt(mq, res.msgs))
	case protocol.RespPullNotFound:
		out.Status = PullNoNewMessage
	case protocol.RespPullRetryImmediately:
		out.Status = PullNoMatchedMessage
	case protocol.RespPullOffsetMoved:
		out.Status = PullOffsetIllegal
	}
	return out, nil
}

func (pc *PullConsumer) queueOffset(ctx context.Context, code int16, mq queue.MessageQueue, extra map[string]string) (int64, error) {
	in, err := pc.instance()
	if err != nil {
		return 0, err
	}
	if _, err := in.route(ctx, mq.Topic); err != nil {
		return 0, err
	}
	return queueOffset(ctx, in, code, mq, extra)
}

// MaxOffset returns the offset the next message of mq will get.
func (pc *PullConsumer) MaxOffset(ctx context.Context, mq queue.MessageQueue) (int64, error) {
	return pc.queueOffset(ctx, protocol.ReqGetMaxOffset, mq, nil)
}

// MinOffset returns the lowest offset still stored in mq.
func (pc *PullConsumer) MinOffset(ctx context.Context, mq queue.MessageQueue) (int64, error) {
	return pc.queueOffset(ctx, protocol.ReqGetMinOffset, mq, nil)
}

// OffsetForTimestamp returns the offset of the first message of mq stored
// at or after t (the max offset if there is none).
func (pc *PullConsumer) OffsetForTimestamp(ctx context.Context, mq queue.MessageQueue, t time.Time) (int64, error) {
	return pc.queueOffset(ctx, protocol.ReqSearchOffsetByTimestamp, mq,
		map[string]string{"timestamp": strconv.FormatInt(t.UnixMilli(), 10)})
}

// CommittedOffset returns the group's committed offset of mq, or
// offset.NoOffset if it has none.
func (pc *PullConsumer) CommittedOffset(ctx context.Context, mq queue.MessageQueue) (int64, error) {
	in, err := pc.instance()
	if err != nil {
		return 0, err
	}
	if _, err := in.route(ctx, mq.Topic); err != nil {
		return 0, err
	}
	s := &remoteStore{inst: in, group: pc.cfg.Group}
	return s.Read(ctx, mq, offset.ReadFromStore)
}

// CommitOffset stores off as the group's offset of mq and waits for the
// broker's answer.
func (pc *PullConsumer) CommitOffset(ctx context.Context, mq queue.MessageQueue, off int64) error {
	in, err := pc.instance()
	if err != nil {
		return err
	}
	if _, err := in.route(ctx, mq.Topic); err != nil {
		return err
	}
	s := &remoteStore{inst: in, group: pc.cfg.Group}
	s.Update(mq, off, false)
	return s.persistSync(ctx, []queue.MessageQueue{mq})
}
