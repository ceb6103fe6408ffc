package broker

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// Admin requests the broker answers by asking a connected consumer (Java
// AdminBrokerProcessor.callConsumer and Broker2Client.getConsumeStatus):
// the admin's connection gets the client's answer as its own.
//
// None of them holds a goroutine while the client thinks: the request to
// the client is sent with InvokeAsync, the handler returns nil (a deferred
// response), and the callback — which the transport runs exactly once, with
// the answer, the timeout or the connection's close — replies to the
// admin. Every call is bounded by Config.ConsumerCallTimeout and by the
// broker's life, so an admin always gets an answer.

// findConsumer returns the channel of clientID in group, if it is online.
func (b *Broker) findConsumer(group, clientID string) (clients.Channel, *remoting.Conn, bool) {
	for _, ch := range b.clients.Channels(group) {
		if ch.ClientID != clientID {
			continue
		}
		if conn, ok := ch.Conn.(*remoting.Conn); ok && conn.Err() == nil {
			return ch, conn, true
		}
	}
	return clients.Channel{}, nil, false
}

// callConsumer forwards code with ext and body to clientID of group and
// answers req, on admin, with the client's code, remark, ext and body. A
// client that is not online, does not answer in time or cannot be written
// to gets Java's codes and remarks.
func (b *Broker) callConsumer(admin *remoting.Conn, req *protocol.Command, code int16, group, clientID string, ext map[string]string, body []byte) *protocol.Command {
	_, conn, ok := b.findConsumer(group, clientID)
	if !ok {
		return errResponse(req, protocol.RespSystemError, "The Consumer <%s> <%s> not online", group, clientID)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.ConsumerCallTimeout)
	answer := func(resp *protocol.Command, err error) {
		cancel()
		b.replyLater(admin, req, consumerAnswer(req, group, clientID, resp, err))
	}
	fwd := protocol.NewRequest(code, ext, body)
	if err := b.invokeAsync(conn, ctx, fwd, answer); err != nil {
		cancel()
		return consumerAnswer(req, group, clientID, nil, err)
	}
	return nil // answered by the callback
}

// invokeAsync is conn.InvokeAsync that also contains a panic from writing
// to a connection the peer just closed (see Broker.send).
func (b *Broker) invokeAsync(conn *remoting.Conn, ctx context.Context, req *protocol.Command, cb func(*protocol.Command, error)) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("write to a closing connection panicked")
			b.log.Warn("broker: write to a closing connection panicked", "remote", conn.RemoteAddr(), "panic", p)
		}
	}()
	return conn.InvokeAsync(ctx, req, cb)
}

// replyLater sends the deferred answer to req, unless req was oneway (the
// transport drops a handler's answer to those; a deferred one must too).
func (b *Broker) replyLater(c *remoting.Conn, req, resp *protocol.Command) {
	if req.IsOneway() {
		return
	}
	if err := c.Reply(resp); err != nil {
		b.log.Debug("broker: deferred answer not delivered", "code", req.Code, "remote", c.RemoteAddr(), "err", err)
	}
}

// consumerAnswer turns the client's answer (or the failure to get one) into
// the response to the admin's req.
func consumerAnswer(req *protocol.Command, group, clientID string, resp *protocol.Command, err error) *protocol.Command {
	switch {
	case errors.Is(err, remoting.ErrTimeout):
		return errResponse(req, protocol.RespConsumeMsgTimeout, "consumer <%s> <%s> Timeout: %v", group, clientID, err)
	case err != nil:
		return errResponse(req, protocol.RespSystemError, "invoke consumer <%s> <%s> Exception: %v", group, clientID, err)
	}
	out := protocol.NewResponse(req, resp.Code, resp.Remark)
	out.ExtFields = resp.ExtFields
	out.Body = resp.Body
	return out
}

// handleConsumerRunningInfo serves GET_CONSUMER_RUNNING_INFO (307) from an
// admin: the request goes to the client as it came (consumerGroup,
// clientId, jstackEnable) and its ConsumerRunningInfo comes back.
func (b *Broker) handleConsumerRunningInfo(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.GetConsumerRunningInfoRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	return b.callConsumer(c, req, protocol.ReqGetConsumerRunningInfo, h.ConsumerGroup, h.ClientID, h.Encode(), nil)
}

// handleConsumeMessageDirectly serves CONSUME_MESSAGE_DIRECTLY (309) from
// an admin (Java ConsumeMessageDirectlyResultRequestHeader: consumerGroup,
// clientId, msgId — an offsetMsgId — and optionally topic): the stored
// message is sent to the client as the body, in the stored-message
// encoding, with brokerName set to this broker's, as Java does; the client
// runs its listener on it and answers a ConsumeMessageDirectlyResult.
//
// Java does not check that msgId's store host is this broker (the tools
// send the request to that host), and neither does this. A message that is
// not in the store is answered SYSTEM_ERROR here; Java fails the same way,
// only through an exception.
func (b *Broker) handleConsumeMessageDirectly(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	group, clientID, msgID := req.Ext("consumerGroup"), req.Ext("clientId"), req.Ext("msgId")
	if group == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: CONSUME_MESSAGE_DIRECTLY header: consumerGroup: missing")
	}
	rec, err := b.st.LookupMessageID(msgID)
	switch {
	case errors.Is(err, protocol.ErrBadMessageID):
		return errResponse(req, protocol.RespSystemError, "consume message directly: bad message id %q: %v", msgID, err)
	case errors.Is(err, store.ErrNotFound):
		return errResponse(req, protocol.RespSystemError, "consume message directly: no message with id %s in broker %s", msgID, b.cfg.BrokerName)
	case err != nil:
		return errResponse(req, protocol.RespSystemError, "consume message directly: read message %s: %v", msgID, err)
	}
	ext := maps.Clone(req.ExtFields)
	if ext == nil {
		ext = map[string]string{}
	}
	ext["brokerName"] = b.cfg.BrokerName
	if topic := req.Ext("topic"); topic != "" {
		if tc, ok := b.topics.get(topic); ok {
			ext["topicSysFlag"] = strconv.Itoa(int(tc.TopicSysFlag))
		}
	}
	return b.callConsumer(c, req, protocol.ReqConsumeMessageDirectly, group, clientID, ext, rec)
}

// handleGetConsumerStatus serves INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223)
// (Java Broker2Client.getConsumeStatus): every online consumer of group
// (or only the one whose client id is clientAddr, when given) is asked
// GET_CONSUMER_STATUS_FROM_CLIENT (221) for its in-memory offsets of topic,
// all at once; the answer is a GetConsumerStatusBody,
// {"messageQueueTable":{},"consumerTable":{<clientId>:{<mq>:offset}}}.
// A client that fails or does not answer in time is left out, as in Java.
func (b *Broker) handleGetConsumerStatus(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	topic, group, only := req.Ext("topic"), req.Ext("group"), req.Ext("clientAddr")
	if topic == "" || group == "" {
		return errResponse(req, protocol.RespSystemError, "protocol: INVOKE_BROKER_TO_GET_CONSUMER_STATUS header: topic and group are required")
	}
	chans := b.clients.Channels(group)
	if len(chans) == 0 {
		return errResponse(req, protocol.RespSystemError, "No Any Consumer online in the consumer group: [%s]", group)
	}
	var targets []clients.Channel
	for _, ch := range chans {
		if _, ok := ch.Conn.(*remoting.Conn); ok && (only == "" || only == ch.ClientID) {
			targets = append(targets, ch)
		}
	}
	g := &statusGather{tables: map[string][]byte{}, pending: len(targets)}
	if g.pending == 0 {
		return g.response(req)
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.ConsumerCallTimeout)
	finish := func() {
		cancel()
		b.replyLater(c, req, g.response(req))
	}
	ext := map[string]string{"topic": topic, "group": group}
	for _, ch := range targets {
		conn := ch.Conn.(*remoting.Conn)
		done := func(resp *protocol.Command, err error) {
			var table []byte
			if err == nil && resp.Code == protocol.RespSuccess {
				table, _ = rawField(resp.Body, "messageQueueTable")
			} else {
				b.log.Debug("broker: consumer status not answered", "group", group, "client", ch.ClientID, "err", err)
			}
			if g.add(ch.ClientID, table) {
				finish()
			}
		}
		if err := b.invokeAsync(conn, ctx, protocol.NewRequest(protocol.ReqGetConsumerStatusFromClient, ext, nil), done); err != nil {
			done(nil, err)
		}
	}
	return nil // answered by the last callback
}

// statusGather collects the answers of one GET_CONSUMER_STATUS fan-out.
type statusGather struct {
	mu      sync.Mutex
	tables  map[string][]byte // client id -> raw messageQueueTable
	pending int
}

// add records one client's table (nil when it did not answer) and reports
// whether it was the last one due.
func (g *statusGather) add(clientID string, table []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if table != nil {
		g.tables[clientID] = table
	}
	g.pending--
	return g.pending == 0
}

// response writes the body; tables are spliced in raw, since the clients
// write them in fastjson's object-key form, which Java's tools read.
func (g *statusGather) response(req *protocol.Command) *protocol.Command {
	g.mu.Lock()
	defer g.mu.Unlock()
	body := []byte(`{"messageQueueTable":{},"consumerTable":{`)
	for i, id := range slices.Sorted(maps.Keys(g.tables)) {
		if i > 0 {
			body = append(body, ',')
		}
		q, _ := json.Marshal(id)
		body = append(body, q...)
		body = append(body, ':')
		body = append(body, g.tables[id]...)
	}
	body = append(body, "}}"...)
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = body
	return resp
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
