package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Request/reply (RocketMQ 4.6+), on the wire as the official clients: the
// request is a normal message carrying CORRELATION_ID, REPLY_TO_CLIENT
// (this client's id) and TTL (seconds); a consumer answers it with a reply
// message (NewReplyMessage, or Producer.Reply) to <cluster>_REPLY_TOPIC,
// sent as SEND_REPLY_MESSAGE; the broker pushes that reply to this client
// (PUSH_REPLY_MESSAGE_TO_CLIENT), which hands it to the waiting Request
// by correlation id. The broker finds this client through its producer
// heartbeat, so a request to a topic whose route was not known yet sends
// a heartbeat first, as the official client does.

// ErrRequestTimeout is wrapped by a Request whose reply did not arrive in
// time.
var ErrRequestTimeout = errors.New("client: no reply before the request's deadline")

const replyMessageType = "reply"

// maxReplyBody caps an inflated reply body (the broker's body limit is
// 4 MiB by default; this leaves room for a larger one).
const maxReplyBody = 64 << 20

// pendingRequests maps correlation ids to the Requests waiting for their
// reply. Correlation ids are unique in the process, so one table serves
// every instance, as in the official client.
var pendingRequests sync.Map // string -> chan *MessageExt

// Request sends msg and waits for its reply until ctx ends (SendTimeout
// when ctx has no deadline). The reply's TTL property is the wait in whole
// seconds, as the official client sets it. A failed send returns at once.
func (p *Producer) Request(ctx context.Context, msg *Message) (*MessageExt, error) {
	ctx, cancel := p.requestContext(ctx)
	defer cancel()
	cid, ch, err := p.startRequest(ctx, msg)
	if err != nil {
		return nil, err
	}
	defer pendingRequests.Delete(cid)
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: request to %s (correlation id %s): %w", ErrRequestTimeout, msg.Topic, cid, ctx.Err())
	}
}

// RequestAsync sends like Request and calls cb once, from another
// goroutine, with the reply or the failure; ctx bounds the wait as in
// Request, so ending it ends the request. It returns an error (and does
// not call cb) only when the request cannot start. Shutdown waits for
// requests in flight.
func (p *Producer) RequestAsync(ctx context.Context, msg *Message, cb func(*MessageExt, error)) error {
	if msg == nil {
		return fmt.Errorf("%w: nil message", ErrBadMessage)
	}
	if err := msg.validate(p.cfg.MaxMessageSize); err != nil {
		return err
	}
	if _, err := p.startAsync(); err != nil {
		return err
	}
	go func() {
		defer p.wg.Done()
		cb(p.Request(ctx, msg))
	}()
	return nil
}

func (p *Producer) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, p.cfg.SendTimeout)
}

// startRequest registers the wait and sends the request.
func (p *Producer) startRequest(ctx context.Context, msg *Message) (string, chan *MessageExt, error) {
	inst, err := p.instance()
	if err != nil {
		return "", nil, err
	}
	if msg == nil {
		return "", nil, fmt.Errorf("%w: nil message", ErrBadMessage)
	}
	deadline, _ := ctx.Deadline()
	cid := message.NewUniqID()
	req := *msg
	req.Properties = maps.Clone(msg.Properties)
	if req.Properties == nil {
		req.Properties = map[string]string{}
	}
	req.Properties[protocol.PropertyCorrelationID] = cid
	req.Properties[protocol.PropertyMessageReplyToClient] = inst.clientID
	req.Properties[protocol.PropertyMessageTTL] = strconv.Itoa(int(time.Until(deadline).Seconds()))
	r, err := p.prepare([]*Message{&req})
	if err != nil {
		return "", nil, err
	}
	if inst.routes.get(req.Topic) == nil {
		// The broker must know this client before the reply comes back.
		if _, err := inst.publishRoute(ctx, req.Topic, p.cfg.CreateTopicKey, p.cfg.DefaultTopicQueueNums); err != nil {
			return "", nil, err
		}
		if err := inst.heartbeat(ctx); err != nil {
			inst.log.Warn("client: heartbeat before request failed", "topic", req.Topic, "err", err)
		}
	}
	ch := make(chan *MessageExt, 1)
	pendingRequests.Store(cid, ch)
	if _, err := p.sendWithRetry(ctx, inst, r, p.cfg.RetryTimes, false); err != nil {
		pendingRequests.Delete(cid)
		return "", nil, err
	}
	return cid, ch, nil
}

// NewReplyMessage builds the reply to a request message a consumer got:
// to <cluster>_REPLY_TOPIC of the request's cluster, with its correlation
// id, requester and TTL. Send it with any Producer (Reply does both).
func NewReplyMessage(request *MessageExt, body []byte) (*Message, error) {
	if request == nil {
		return nil, fmt.Errorf("%w: no request message to reply to", ErrBadMessage)
	}
	cluster := request.Property(protocol.PropertyCluster)
	if cluster == "" {
		return nil, fmt.Errorf("%w: the request message has no %s property (not a request stored by a broker)", ErrBadMessage, protocol.PropertyCluster)
	}
	return &Message{
		Topic: cluster + "_REPLY_TOPIC",
		Body:  body,
		Properties: map[string]string{
			protocol.PropertyMessageType:          replyMessageType,
			protocol.PropertyCorrelationID:        request.Property(protocol.PropertyCorrelationID),
			protocol.PropertyMessageReplyToClient: request.Property(protocol.PropertyMessageReplyToClient),
			protocol.PropertyMessageTTL:           request.Property(protocol.PropertyMessageTTL),
		},
	}, nil
}

// Reply sends the reply to a request message a consumer got. The broker
// answers SYSTEM_ERROR (a *BrokerError) when the requester is gone.
func (p *Producer) Reply(ctx context.Context, request *MessageExt, body []byte) (SendResult, error) {
	m, err := NewReplyMessage(request, body)
	if err != nil {
		return SendResult{}, err
	}
	return p.Send(ctx, m)
}

// handlePushReply serves PUSH_REPLY_MESSAGE_TO_CLIENT: the reply goes to
// the Request waiting for its correlation id. It is answered SUCCESS
// whether or not one still waits, as the official client does.
func (in *instance) handlePushReply(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	m, err := decodePushedReply(req)
	if err != nil {
		return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
	}
	cid := m.Property(protocol.PropertyCorrelationID)
	if ch, ok := pendingRequests.LoadAndDelete(cid); ok {
		ch.(chan *MessageExt) <- m
	} else {
		in.log.Debug("client: reply matches no waiting request", "correlationId", cid, "from", m.BornHost)
	}
	return protocol.NewResponse(req, protocol.RespSuccess, "")
}

// decodePushedReply reads Java's ReplyMessageRequestHeader and the body.
func decodePushedReply(req *protocol.Command) (*MessageExt, error) {
	num := func(key string) int64 {
		v, _ := strconv.ParseInt(req.Ext(key), 10, 64)
		return v
	}
	topic := req.Ext("topic")
	if topic == "" {
		return nil, errors.New("client: push reply message: no topic in the header")
	}
	m := &MessageExt{}
	m.Topic = topic
	m.QueueID = int32(num("queueId"))
	m.SysFlag = int32(num("sysFlag"))
	m.Flag = int32(num("flag"))
	m.BornTimestamp = num("bornTimestamp")
	m.StoreTimestamp = num("storeTimestamp")
	m.ReconsumeTimes = int32(num("reconsumeTimes"))
	m.BornHost = parseHost(req.Ext("bornHost"))
	m.StoreHost = parseHost(req.Ext("storeHost"))
	m.Properties = message.UnmarshalProperties(req.Ext("properties"))
	if m.Properties == nil {
		m.Properties = map[string]string{}
	}
	m.Properties[protocol.PropertyReplyMessageArriveTime] = strconv.FormatInt(time.Now().UnixMilli(), 10)
	m.Body = req.Body
	if m.SysFlag&protocol.SysFlagCompressed != 0 {
		b, err := message.Decompress(req.Body, maxReplyBody)
		if err != nil {
			return nil, fmt.Errorf("client: push reply message: %w", err)
		}
		m.Body = b
	}
	m.Queue = queue.MessageQueue{Topic: topic, QueueID: m.QueueID}
	return m, nil
}

// parseHost reads host:port, also in Java's "/host:port" form; anything
// else is the zero address.
func parseHost(s string) netip.AddrPort {
	ap, err := netip.ParseAddrPort(strings.TrimPrefix(s, "/"))
	if err != nil {
		return netip.AddrPort{}
	}
	return ap
}
