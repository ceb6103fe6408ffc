package client

import (
	"context"
	"fmt"
	"time"

	"github.com/runnelmq/runnel/client/internal/processqueue"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/rebalance"
	"github.com/runnelmq/runnel/internal/confdefault"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// MessageModel says how a consumer group shares messages.
type MessageModel int

const (
	// Clustering: each message goes to one consumer of the group; queues
	// are split among the group's clients; offsets live on the broker.
	Clustering MessageModel = iota
	// Broadcasting: every consumer gets every message; offsets live in a
	// local file.
	Broadcasting
)

func (m MessageModel) String() string {
	if m == Broadcasting {
		return protocol.MessageModelBroadcasting
	}
	return protocol.MessageModelClustering
}

// Where a group with no committed offset starts (PushConsumerConfig.ConsumeFrom);
// the same values as package offset's, here so that callers need one import.
const (
	ConsumeFromLastOffset  = offset.ConsumeFromLastOffset
	ConsumeFromFirstOffset = offset.ConsumeFromFirstOffset
	ConsumeFromTimestamp   = offset.ConsumeFromTimestamp
)

// ConsumeResult is a concurrent listener's verdict on a batch.
type ConsumeResult int

const (
	// ConsumeSuccess: the batch is consumed; its offsets may be committed.
	ConsumeSuccess ConsumeResult = iota
	// ConsumeRetryLater: redeliver the batch later (clustering: through the
	// group's retry topic with a growing delay; broadcasting: dropped).
	ConsumeRetryLater
)

// OrderlyResult is an orderly listener's verdict on a batch.
type OrderlyResult int

const (
	// OrderlySuccess: the batch is consumed.
	OrderlySuccess OrderlyResult = iota
	// OrderlySuspend: stop this queue for SuspendCurrentQueueTime and then
	// deliver the same batch again (nothing behind it is delivered first).
	OrderlySuspend
)

// ConcurrentListener consumes a batch; batches of one queue may run in
// parallel and out of order.
type ConcurrentListener func(ctx context.Context, msgs []*MessageExt) ConsumeResult

// OrderlyListener consumes a batch; each queue is consumed by one goroutine
// at a time, in queue order.
type OrderlyListener func(ctx context.Context, msgs []*MessageExt) OrderlyResult

// PushConsumerConfig configures a PushConsumer. Zero fields take the
// defaults of DefaultPushConsumerConfig. Exactly one of Concurrently and
// Orderly must be set.
type PushConsumerConfig struct {
	Client ClientConfig
	// Group is the consumer group. Required.
	Group string
	// Model is Clustering (default) or Broadcasting.
	Model MessageModel
	// ConsumeFrom is where a group with no committed offset starts:
	// ConsumeFromLastOffset (default), ConsumeFromFirstOffset or
	// ConsumeFromTimestamp (then ConsumeTimestamp, default 30 minutes
	// before Start). It applies only where the broker reports no offset:
	// RocketMQ brokers, and Runnel, report offset 0 for a new group on a
	// young queue (min offset 0, its first message still stored), so on such
	// a queue every new group starts at the beginning whatever this says,
	// as with the official clients.
	ConsumeFrom      offset.ConsumeFrom
	ConsumeTimestamp time.Time
	// Strategy splits queues among the group's clients. Default
	// rebalance.Averagely.
	Strategy rebalance.Strategy
	// Flow holds the flow-control thresholds; each zero field takes its
	// default, processqueue.DefaultFlowConfig()'s: 1000 messages or 100 MiB
	// per queue, no topic-wide threshold, span 2000, 50 ms back-off, 3 s
	// before an orderly retry of an unlocked queue.
	Flow processqueue.FlowConfig
	// PullBatchSize is the most messages one pull asks for. Default 32.
	PullBatchSize int
	// PullInterval is a pause between pulls of one queue. Default 0.
	PullInterval time.Duration
	// PullErrorDelay is the pause after a failed pull. Default 3s.
	PullErrorDelay time.Duration
	// BrokerSuspendMax is how long the broker may hold a pull with no
	// message. Default 20s; the pull's own deadline is this plus 10s.
	BrokerSuspendMax time.Duration
	// ConsumeBatchSize is the most messages given to one listener call.
	// Default 1.
	ConsumeBatchSize int
	// ConsumeGoroutines is the number of goroutines running a concurrent
	// listener. Default 20.
	ConsumeGoroutines int
	// MaxReconsumeTimes is how often a message is redelivered before it
	// goes to the dead-letter queue. Default 16 for concurrent listeners and
	// unlimited (-1) for orderly ones.
	MaxReconsumeTimes int
	// SuspendCurrentQueueTime is an orderly queue's pause after
	// OrderlySuspend. Default 1s.
	SuspendCurrentQueueTime time.Duration
	// RetryLocalDelay is the pause before a batch whose send-back failed is
	// consumed again locally. Default 5s.
	RetryLocalDelay time.Duration
	// ConsumeTimeout is how long a concurrent listener call may run before
	// its messages are sent back for redelivery (delay level
	// 3+reconsumeTimes) and dropped from the process queue, so that one
	// stuck call cannot hold the queue's committed offset forever; the
	// call's own result is then ignored. Checked every ConsumeTimeout/4.
	// Default 15 minutes, as RocketMQ; negative disables it. Clustering
	// only.
	ConsumeTimeout time.Duration
	// Now is the clock for ConsumeTimeout. Default time.Now.
	Now func() time.Time
	// LocalOffsetDir is the root of broadcasting offset files. Default
	// $HOME/.rocketmq_offsets.
	LocalOffsetDir string
	// PostSubscriptionWhenPull sends the subscription with every pull, so
	// the broker need not wait for the heartbeat. Default false, as the
	// official clients.
	PostSubscriptionWhenPull bool

	Concurrently ConcurrentListener
	Orderly      OrderlyListener
}

// DefaultPushConsumerConfig returns the defaults; Group, a listener and
// Client.NameServerAddrs must still be set.
func DefaultPushConsumerConfig() PushConsumerConfig {
	return PushConsumerConfig{
		Client:                  DefaultClientConfig(),
		Strategy:                rebalance.Averagely{},
		Flow:                    processqueue.DefaultFlowConfig(),
		PullBatchSize:           32,
		PullErrorDelay:          3 * time.Second,
		BrokerSuspendMax:        20 * time.Second,
		ConsumeBatchSize:        1,
		ConsumeGoroutines:       20,
		SuspendCurrentQueueTime: time.Second,
		RetryLocalDelay:         5 * time.Second,
		ConsumeTimeout:          15 * time.Minute,
		Now:                     time.Now,
	}
}

func (c *PushConsumerConfig) ensureDefaults() error {
	d := DefaultPushConsumerConfig()
	if err := validateGroup("Group", c.Group); err != nil {
		return err
	}
	if (c.Concurrently == nil) == (c.Orderly == nil) {
		return fmt.Errorf("%w: set exactly one of Concurrently and Orderly", ErrBadConfig)
	}
	if c.Model != Clustering && c.Model != Broadcasting {
		return fmt.Errorf("%w: Model %d", ErrBadConfig, c.Model)
	}
	if c.ConsumeFrom < offset.ConsumeFromLastOffset || c.ConsumeFrom > offset.ConsumeFromTimestamp {
		return fmt.Errorf("%w: ConsumeFrom %d", ErrBadConfig, c.ConsumeFrom)
	}
	if c.ConsumeTimestamp.IsZero() {
		c.ConsumeTimestamp = time.Now().Add(-30 * time.Minute)
	}
	if c.Strategy == nil {
		c.Strategy = d.Strategy
	}
	c.Flow = c.Flow.WithDefaults()
	if err := c.Flow.Validate(); err != nil {
		return fmt.Errorf("%w: Flow: %w", ErrBadConfig, err)
	}
	ints := []struct {
		name string
		v    *int
		def  int
		max  int
	}{
		{"PullBatchSize", &c.PullBatchSize, d.PullBatchSize, 1024},
		{"ConsumeBatchSize", &c.ConsumeBatchSize, d.ConsumeBatchSize, 1024},
		{"ConsumeGoroutines", &c.ConsumeGoroutines, d.ConsumeGoroutines, 1000},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 1 || *f.v > f.max {
			return fmt.Errorf("%w: %s is %d, want 1..%d", ErrBadConfig, f.name, *f.v, f.max)
		}
	}
	if c.ConsumeTimeout == 0 {
		c.ConsumeTimeout = d.ConsumeTimeout
	}
	if c.Now == nil {
		c.Now = d.Now
	}
	// The consumer's own durations; ClientConfig's list looks alike.
	if err := confdefault.Fill(ErrBadConfig,
		confdefault.Of("PullErrorDelay", &c.PullErrorDelay, d.PullErrorDelay),
		confdefault.Of("BrokerSuspendMax", &c.BrokerSuspendMax, d.BrokerSuspendMax),
		confdefault.Of("SuspendCurrentQueueTime", &c.SuspendCurrentQueueTime, d.SuspendCurrentQueueTime),
		confdefault.Of("RetryLocalDelay", &c.RetryLocalDelay, d.RetryLocalDelay),
	); err != nil {
		return err
	}
	if c.PullInterval < 0 {
		return fmt.Errorf("%w: PullInterval is negative", ErrBadConfig)
	}
	if c.MaxReconsumeTimes == 0 {
		c.MaxReconsumeTimes = 16
		if c.Orderly != nil {
			c.MaxReconsumeTimes = -1
		}
	}
	if c.Model == Broadcasting && c.LocalOffsetDir == "" {
		root, err := offset.DefaultLocalRoot()
		if err != nil {
			return err
		}
		c.LocalOffsetDir = root
	}
	return nil
}

func (c *PushConsumerConfig) consumeFromString() string {
	switch c.ConsumeFrom {
	case offset.ConsumeFromFirstOffset:
		return protocol.ConsumeFromFirstOffset
	case offset.ConsumeFromTimestamp:
		return protocol.ConsumeFromTimestamp
	}
	return protocol.ConsumeFromLastOffset
}
