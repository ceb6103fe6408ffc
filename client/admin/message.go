package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// uniqueKeyQueryFlag is the extField that makes QUERY_MESSAGE look up a
// client message id (UNIQ_KEY) instead of a key (MixAll.UNIQUE_MSG_QUERY_FLAG).
const uniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

// DefaultMaxMessages is how many messages a key query returns at most when
// KeyQuery.Max is 0 (mqadmin queryMsgByKey's 64).
const DefaultMaxMessages = 64

// QueryMessageByID finds a message by id. An offsetMsgId (store host and
// commit log offset) whose host is a broker the name server lists is read
// with VIEW_MESSAGE_BY_ID from that broker. Otherwise, when topic is set,
// id is taken as a client message id (UNIQ_KEY, what producers report as
// the message id) and looked up with QUERY_MESSAGE on the topic's brokers.
// Both forms are 32 hex digits, so a client id without a topic is tried as
// an offsetMsgId at whatever address it decodes to.
func (a *Admin) QueryMessageByID(ctx context.Context, id, topic string) (*protocol.MessageExt, error) {
	op := fmt.Sprintf("message %q", id)
	if id == "" {
		return nil, fmt.Errorf("%w: message id is empty", ErrBadArgument)
	}
	host, phys, perr := message.ParseOffsetMsgID(id)
	if perr != nil && topic == "" {
		return nil, fmt.Errorf("admin: %s: %w (a client message id needs the topic)", op, perr)
	}
	var viewErr error
	if perr == nil {
		addr := host.String()
		known := false
		if info, err := a.ClusterInfo(ctx); err == nil {
			known = nameOfAddr(info, addr) != ""
		}
		if known || topic == "" {
			n := Node{Addr: addr}
			m, err := a.viewMessage(ctx, op, n, phys, topic)
			if err == nil {
				return m, nil
			}
			if topic == "" {
				if !known {
					err = fmt.Errorf("%w (no known broker has address %s: if %s is a client message id, give its topic)", err, addr, id)
				}
				return nil, err
			}
			viewErr = err
		}
	}
	msgs, err := a.queryMessages(ctx, op, topic, id, true, 0, math.MaxInt64, 32)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		err := fmt.Errorf("admin: %s: %w on topic %q", op, ErrNotFound, topic)
		if viewErr != nil {
			err = errors.Join(err, viewErr)
		}
		return nil, err
	}
	return msgs[0], nil
}

// viewMessage reads the record at commit log offset phys from n.
func (a *Admin) viewMessage(ctx context.Context, op string, n Node, phys int64, topic string) (*protocol.MessageExt, error) {
	req := protocol.NewRequest(protocol.ReqViewMessageByID, protocol.ViewMessageRequestHeader{Offset: phys, Topic: topic}.Encode(), nil)
	resp, err := a.callBrokerOK(ctx, op, n, req)
	if err != nil {
		return nil, err
	}
	m, _, err := message.DecodeStoredMessage(resp.Body, true)
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %s: %w", op, n, err)
	}
	return m, nil
}

// KeyQuery selects messages by key.
type KeyQuery struct {
	Topic string
	Key   string
	// Begin and End bound the store time; zero means unbounded.
	Begin, End time.Time
	// Max caps the result. Default DefaultMaxMessages.
	Max int
	// Unique takes Key as a client message id (UNIQ_KEY, what producers
	// report as the message id) rather than a key of KEYS: every copy of
	// that message (a producer's retries store it more than once), as
	// mqadmin queryMsgByUniqueKey -a lists them.
	Unique bool
}

// QueryMessageByKey asks every broker of the topic for messages whose KEYS
// hold q.Key (QUERY_MESSAGE), and returns them by store time, at most
// q.Max. Brokers index keys by hash, so the answers are filtered on the
// actual keys.
func (a *Admin) QueryMessageByKey(ctx context.Context, q KeyQuery) ([]*protocol.MessageExt, error) {
	if q.Key == "" {
		return nil, fmt.Errorf("%w: key is empty", ErrBadArgument)
	}
	if q.Max <= 0 {
		q.Max = DefaultMaxMessages
	}
	begin, end := int64(0), int64(math.MaxInt64)
	if !q.Begin.IsZero() {
		begin = q.Begin.UnixMilli()
	}
	if !q.End.IsZero() {
		end = q.End.UnixMilli()
	}
	if begin > end {
		return nil, fmt.Errorf("%w: begin %v is after end %v", ErrBadArgument, q.Begin, q.End)
	}
	op := fmt.Sprintf("messages with key %q on topic %q", q.Key, q.Topic)
	if q.Unique {
		op = fmt.Sprintf("messages with id %q on topic %q", q.Key, q.Topic)
	}
	return a.queryMessages(ctx, op, q.Topic, q.Key, q.Unique, begin, end, q.Max)
}

// queryMessages runs QUERY_MESSAGE on every broker of topic and keeps the
// messages that really match key (or, when uniq, whose UNIQ_KEY is key),
// without duplicates, oldest first, at most maxNum.
func (a *Admin) queryMessages(ctx context.Context, op, topic, key string, uniq bool, begin, end int64, maxNum int) ([]*protocol.MessageExt, error) {
	nodes, err := a.routeNodes(ctx, topic)
	if err != nil {
		return nil, err
	}
	ext := protocol.QueryMessageRequestHeader{Topic: topic, Key: key, MaxNum: int32(min(maxNum, math.MaxInt32)),
		BeginTimestamp: begin, EndTimestamp: end}.Encode()
	if uniq {
		ext[uniqueKeyQueryFlag] = "true"
	}
	seen := make(map[string]bool)
	var out []*protocol.MessageExt
	req := protocol.NewRequest(protocol.ReqQueryMessage, ext, nil)
	err = a.callEach(ctx, op, nodes, req, func(n Node, resp *protocol.Command) error {
		msgs, err := message.DecodeMessages(resp.Body)
		if err != nil {
			return fmt.Errorf("admin: %s: %s: %w", op, n, err)
		}
		for _, m := range msgs {
			if m.Topic != topic || seen[m.OffsetMsgID] || !matches(m, key, uniq) {
				continue
			}
			seen[m.OffsetMsgID] = true
			out = append(out, m)
		}
		return nil
	}, protocol.RespQueryNotFound)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(x, y *protocol.MessageExt) int {
		return cmp.Or(cmp.Compare(x.StoreTimestamp, y.StoreTimestamp), cmp.Compare(x.OffsetMsgID, y.OffsetMsgID))
	})
	if len(out) > maxNum {
		out = out[:maxNum]
	}
	return out, nil
}

func matches(m *protocol.MessageExt, key string, uniq bool) bool {
	if uniq {
		return m.UniqKey() == key
	}
	return slices.Contains(m.Keys(), key)
}
