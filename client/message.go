package client

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/poison"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// Message is what a producer sends.
type Message struct {
	Topic string
	Body  []byte
	// Tags is the message's tag (RocketMQ allows one), matched by consumers'
	// tag expressions.
	Tags string
	// Keys are indexed by the broker for lookups.
	Keys []string
	// DelayLevel, 1..18, delays delivery by RocketMQ's level table
	// (1s 5s 10s 30s 1m ... 2h); 0 = none.
	DelayLevel int
	// DeliverAt, when set, holds the message back until that time (a timer
	// message, TIMER_DELIVER_MS, as the official client's
	// WithDelayTimestamp): any time up to the broker's timerMaxDelaySec
	// ahead (3 days by default); a time already past means no delay.
	DeliverAt time.Time
	// DeliverAfter, when positive, holds the message back that long after
	// the broker receives it (TIMER_DELAY_MS). At most one of DelayLevel,
	// DeliverAt and DeliverAfter may be set.
	DeliverAfter time.Duration
	// ShardingKey picks the queue under HashSelector (orderly producers):
	// messages with the same key go to the same queue, in order.
	ShardingKey string
	// Flag is the user flag, stored and delivered unchanged.
	Flag int32
	// Properties are extra user properties.
	Properties map[string]string
}

// MessageExt is a message as a consumer receives it.
type MessageExt struct {
	protocol.MessageExt
	// Queue is the queue it was pulled from (for a retried message, the
	// retry topic's queue; Topic is the original topic).
	Queue queue.MessageQueue
}

// validateTopic applies RocketMQ's topic rules.
func validateTopic(topic string) error {
	switch {
	case topic == "":
		return fmt.Errorf("%w: topic is empty", ErrBadMessage)
	case len(topic) > 127:
		return fmt.Errorf("%w: topic %q is longer than 127 characters", ErrBadMessage, topic)
	case !topicconf.ValidName(topic):
		return fmt.Errorf("%w: topic %q may only contain letters, digits, %%, |, _ and -", ErrBadMessage, topic)
	}
	return nil
}

func validateGroup(field, group string) error {
	if group == "" || len(group) > 255 || !topicconf.ValidName(group) {
		return fmt.Errorf("%w: %s %q must be 1..255 of letters, digits, %%, |, _ and -", ErrBadConfig, field, group)
	}
	return nil
}

// typedProperties calls set with each property m's typed fields give it,
// the one list of them: they override the same keys in m.Properties.
func (m *Message) typedProperties(set func(name, value string)) {
	if m.Tags != "" {
		set(protocol.PropertyTags, m.Tags)
	}
	if len(m.Keys) > 0 {
		set(protocol.PropertyKeys, strings.Join(m.Keys, protocol.KeySeparator))
	}
	if m.DelayLevel > 0 {
		set(protocol.PropertyDelayTimeLevel, strconv.Itoa(m.DelayLevel))
	}
	if !m.DeliverAt.IsZero() {
		set(protocol.PropertyTimerDeliverMS, strconv.FormatInt(m.DeliverAt.UnixMilli(), 10))
	}
	if m.DeliverAfter > 0 {
		set(propertyTimerDelayMS, strconv.FormatInt(m.DeliverAfter.Milliseconds(), 10))
	}
	if m.ShardingKey != "" {
		set(protocol.PropertyShardingKey, m.ShardingKey)
	}
}

// wireProperties is message.MarshalProperties of m.properties() with
// UNIQ_KEY set to uniq, without the map: the pairs are gathered on the
// stack, sorted and written once. One string is all a single send's
// properties cost.
func (m *Message) wireProperties(uniq string) string {
	var small [16]message.Property
	ps := small[:0]
	for k, v := range m.Properties {
		ps = append(ps, message.Property{Name: k, Value: v})
	}
	set := func(name, value string) {
		for i := range ps {
			if ps[i].Name == name {
				ps[i].Value = value
				return
			}
		}
		ps = append(ps, message.Property{Name: name, Value: value})
	}
	m.typedProperties(set)
	set(protocol.PropertyUniqClientMessageIDKey, uniq)
	slices.SortFunc(ps, func(a, b message.Property) int { return strings.Compare(a.Name, b.Name) })
	var buf [512]byte
	return string(message.AppendSortedProperties(buf[:0], ps))
}

// properties returns the wire properties of m (without UNIQ_KEY), for a
// batch's messages.
func (m *Message) properties() map[string]string {
	p := make(map[string]string, len(m.Properties)+4)
	maps.Copy(p, m.Properties)
	m.typedProperties(func(name, value string) { p[name] = value })
	return p
}

func (m *Message) validate(maxSize int) error {
	if err := validateTopic(m.Topic); err != nil {
		return err
	}
	switch {
	case len(m.Body) == 0:
		return fmt.Errorf("%w: body of a message to %s is empty", ErrBadMessage, m.Topic)
	case len(m.Body) > maxSize:
		return fmt.Errorf("%w: body of %d bytes to %s exceeds the %d-byte limit", ErrBadMessage, len(m.Body), m.Topic, maxSize)
	case m.DelayLevel < 0:
		return fmt.Errorf("%w: negative delay level %d", ErrBadMessage, m.DelayLevel)
	case m.DeliverAfter < 0:
		return fmt.Errorf("%w: negative DeliverAfter %v", ErrBadMessage, m.DeliverAfter)
	case m.delayed() > 1:
		return fmt.Errorf("%w: set at most one of DelayLevel, DeliverAt and DeliverAfter", ErrBadMessage)
	}
	return nil
}

// propertyTimerDelayMS is Java 5's MessageConst.PROPERTY_TIMER_DELAY_MS.
const propertyTimerDelayMS = "TIMER_DELAY_MS"

// delayed returns how many of the ways to delay m are set.
func (m *Message) delayed() int {
	n := 0
	if m.DelayLevel > 0 {
		n++
	}
	if !m.DeliverAt.IsZero() {
		n++
	}
	if m.DeliverAfter > 0 {
		n++
	}
	return n
}

// encodeBatch lays messages end to end in the batch body format, after
// dst.
func encodeBatch(dst []byte, msgs []*protocol.Message) ([]byte, error) {
	b, err := protocol.AppendBatch(dst, msgs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	return b, nil
}

// Recycled batch bodies.
//
// A batch's body (32 KiB and more for 32 1 KiB messages) is garbage as
// soon as its send is written: the connection copies a request into its
// write buffer before the call waits for the answer. A batch send made it
// anew each time, a quarter of the bytes a batch producer allocated.
// sendWithRetry gives it back once its last attempt returned (overwritten
// first in a test binary: package poison).
var batchBodies sync.Pool // *[]byte

// maxPooledBatchBody bounds the bodies kept: a rare huge batch does not
// pin its memory.
const maxPooledBatchBody = 256 << 10

func getBatchBody() *[]byte {
	if v, ok := batchBodies.Get().(*[]byte); ok {
		return v
	}
	return new([]byte)
}

func putBatchBody(b *[]byte) {
	if cap(*b) > maxPooledBatchBody {
		return
	}
	poison.Overwrite((*b)[:cap(*b)])
	*b = (*b)[:0]
	batchBodies.Put(b)
}
