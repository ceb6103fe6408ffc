package remotingdoor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/broker/transaction"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// connChannel is a remoting connection as the core's Channel: the core's
// typed calls to a client become RocketMQ requests here. Answers the
// broker gives later go through the connection's Responder (Conn.Defer),
// and the transport contains its own write panic (Conn.write).
type connChannel struct {
	conn *remoting.Conn
	log  *slog.Logger
}

// channelKey is where a connection keeps its connChannel.
type channelKey struct{}

// channel returns the connection's Channel, made once per connection.
func (d *Door) channel(c *remoting.Conn) *connChannel {
	if ch, ok := c.Value(channelKey{}).(*connChannel); ok {
		return ch
	}
	ch := &connChannel{conn: c, log: d.log}
	c.SetValue(channelKey{}, ch)
	return ch
}

func (ch *connChannel) ID() uint64         { return ch.conn.ID() }
func (ch *connChannel) RemoteAddr() string { return ch.conn.RemoteAddr() }
func (ch *connChannel) Closed() bool       { return ch.conn.Err() != nil }

// oneway sends a request the client does not answer.
func (ch *connChannel) oneway(code int16, ext map[string]string, body []byte) {
	if err := ch.conn.InvokeOneway(protocol.NewRequest(code, ext, body)); err != nil {
		ch.log.Debug("broker: oneway request not delivered", "code", code, "remote", ch.conn.RemoteAddr(), "err", err)
	}
}

// call sends a request and hands the client's answer to done, once.
func (ch *connChannel) call(ctx context.Context, code int16, ext map[string]string, body []byte, done func(*protocol.Command, error)) error {
	return ch.conn.InvokeAsync(ctx, protocol.NewRequest(code, ext, body), func(resp *protocol.Command, err error) {
		if errors.Is(err, remoting.ErrTimeout) {
			err = errors.Join(core.ErrClientTimeout, err)
		}
		done(resp, err)
	})
}

func (ch *connChannel) NotifyConsumerIDsChanged(group string) {
	ch.oneway(protocol.ReqNotifyConsumerIDsChanged, protocol.NotifyConsumerIDsChangedRequestHeader{ConsumerGroup: group}.Encode(), nil)
}

func (ch *connChannel) ResetOffset(topic, group string, timestamp int64, table map[protocol.MessageQueue]int64) {
	ext := map[string]string{"topic": topic, "group": group, "timestamp": strconv.FormatInt(timestamp, 10)}
	ch.oneway(protocol.ReqResetConsumerClientOffset, ext, protocol.ResetOffsetBody{OffsetTable: table}.Encode())
}

func (ch *connChannel) CheckTransactionState(c transaction.Check, msg []byte) {
	h := protocol.CheckTransactionStateRequestHeader{
		TranStateTableOffset: c.QueueOffset, CommitLogOffset: c.CommitLogOffset,
		MsgID: c.MsgID, TransactionID: c.TransactionID, OffsetMsgID: c.OffsetMsgID,
	}
	ch.oneway(protocol.ReqCheckTransactionState, h.Encode(), msg)
}

func replyOf(resp *protocol.Command) core.ClientReply {
	return core.ClientReply{OK: resp.Code == protocol.RespSuccess, Status: int32(resp.Code), Remark: resp.Remark, Ext: resp.ExtFields, Body: resp.Body}
}

func (ch *connChannel) ConsumerRunningInfo(ctx context.Context, group, clientID string, jstack bool, done func(core.ClientReply, error)) error {
	h := protocol.GetConsumerRunningInfoRequestHeader{ConsumerGroup: group, ClientID: clientID, JstackEnable: jstack}
	return ch.call(ctx, protocol.ReqGetConsumerRunningInfo, h.Encode(), nil, func(resp *protocol.Command, err error) {
		if err != nil {
			done(core.ClientReply{}, err)
			return
		}
		done(replyOf(resp), nil)
	})
}

func (ch *connChannel) ConsumeMessageDirectly(ctx context.Context, r core.DirectConsume, msg []byte, done func(core.ClientReply, error)) error {
	ext := map[string]string{"consumerGroup": r.Group, "clientId": r.ClientID, "msgId": r.MsgID, "brokerName": r.BrokerName}
	if r.Topic != "" {
		ext["topic"] = r.Topic
	}
	if r.TopicSysFlag >= 0 {
		ext["topicSysFlag"] = strconv.Itoa(r.TopicSysFlag)
	}
	return ch.call(ctx, protocol.ReqConsumeMessageDirectly, ext, msg, func(resp *protocol.Command, err error) {
		if err != nil {
			done(core.ClientReply{}, err)
			return
		}
		done(replyOf(resp), nil)
	})
}

func (ch *connChannel) ConsumerStatus(ctx context.Context, topic, group string, done func([]byte, error)) error {
	ext := map[string]string{"topic": topic, "group": group}
	return ch.call(ctx, protocol.ReqGetConsumerStatusFromClient, ext, nil, func(resp *protocol.Command, err error) {
		switch {
		case err != nil:
			done(nil, err)
		case resp.Code != protocol.RespSuccess:
			done(nil, errors.New(resp.Remark))
		default:
			table, _ := rawField(resp.Body, "messageQueueTable")
			done(table, nil)
		}
	})
}

// rawField returns the raw value of the top-level field name of the JSON
// object body. Keys nested deeper may be objects (fastjson's MessageQueue
// keys), which encoding/json rejects, so the value is delimited by
// scanning: brackets are counted outside strings.
func rawField(body []byte, name string) ([]byte, bool) {
	want, _ := json.Marshal(name)
	depth := 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end := stringEnd(body, i)
			if end < 0 {
				return nil, false
			}
			if depth == 1 && string(body[i:end]) == string(want) {
				j := skipSpace(body, end)
				if j < len(body) && body[j] == ':' {
					start := skipSpace(body, j+1)
					if stop := valueEnd(body, start); stop > start {
						return body[start:stop], true
					}
					return nil, false
				}
			}
			i = end - 1
		}
	}
	return nil, false
}

// stringEnd returns the index just past the JSON string starting at i, or
// -1 when it is not terminated.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// valueEnd returns the index just past the value starting at i: a balanced
// object or array, a string, or a scalar up to the next ',', '}' or ']'.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			case '"':
				end := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}

// PushReply sends PUSH_REPLY_MESSAGE_TO_CLIENT (326) with Java's
// ReplyMessageRequestHeader.
func (ch *connChannel) PushReply(ctx context.Context, r core.PushedReply, done func(core.ClientReply, error)) error {
	return ch.call(ctx, protocol.ReqPushReplyMessageToClient, pushReplyHeader(r), r.Message.Body, func(resp *protocol.Command, err error) {
		if err != nil {
			done(core.ClientReply{}, err)
			return
		}
		done(replyOf(resp), nil)
	})
}
