package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// registerHandlers installs the answers to broker-to-client requests.
func (in *instance) registerHandlers() {
	in.rc.Handle(protocol.ReqNotifyConsumerIDsChanged, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		// Oneway from the broker: rebalance everything now, as the official
		// clients do; the group in the header is only informative.
		in.log.Debug("client: consumer ids changed", "group", req.Ext("consumerGroup"))
		in.triggerRebalance()
		return nil
	})
	in.rc.Handle(protocol.ReqGetConsumerRunningInfo, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h protocol.GetConsumerRunningInfoRequestHeader
		if err := h.Decode(req.ExtFields); err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		if h.ClientID != in.clientID {
			return protocol.NewResponse(req, protocol.RespSystemError, "Can't find specified client instance "+h.ClientID)
		}
		c := in.consumer(h.ConsumerGroup)
		if c == nil {
			return protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("The Consumer Group <%s> not exist in this consumer", h.ConsumerGroup))
		}
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = c.runningInfo()
		return resp
	})
	in.rc.Handle(protocol.ReqConsumeMessageDirectly, func(ctx context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		group, id := req.Ext("consumerGroup"), req.Ext("clientId")
		if id != in.clientID {
			return protocol.NewResponse(req, protocol.RespSystemError, "Can't find specified client instance of: "+id)
		}
		c := in.consumer(group)
		if c == nil {
			return protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("The Consumer Group <%s> not exist in this consumer", group))
		}
		msgs, err := protocol.DecodeMessages(req.Body)
		if err != nil || len(msgs) != 1 {
			return protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("client: consume directly: body holds %d messages: %v", len(msgs), err))
		}
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = c.consumeDirectly(ctx, msgs[0], req.Ext("brokerName"))
		return resp
	})
	in.rc.Handle(protocol.ReqGetConsumerStatusFromClient, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		c := in.consumer(req.Ext("group"))
		if c == nil {
			return protocol.NewResponse(req, protocol.RespSystemError, "client: no consumer of group "+req.Ext("group"))
		}
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		resp.Body = c.consumerStatus(req.Ext("topic"))
		return resp
	})
	in.rc.Handle(protocol.ReqCheckTransactionState, in.handleCheckTransaction)
	in.rc.Handle(protocol.ReqResetConsumerClientOffset, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h protocol.ResetOffsetRequestHeader
		if err := h.Decode(req.ExtFields); err != nil {
			in.log.Warn("client: bad reset offset request", "err", err)
			return nil
		}
		table, err := decodeOffsetTable(req.Body)
		if err != nil {
			in.log.Warn("client: bad reset offset body", "group", h.Group, "err", err)
			return nil
		}
		c := in.consumer(h.Group)
		if c == nil {
			return nil
		}
		// Reset on the instance's own life, not the request's: the
		// connection may close while the queues are being re-created.
		in.spawn(func() { c.resetOffsets(in.life, h.Topic, table) })
		return nil
	})
}

// decodeOffsetTable parses a ResetOffsetBody: {"offsetTable":{<mq>:off,...}}
// with fastjson object keys, or gson's [[<mq>,off],...] form.
func decodeOffsetTable(body []byte) (map[queue.MessageQueue]int64, error) {
	raw := body
	// fastjson keys make the body invalid JSON; find the table by hand.
	i := bytes.Index(raw, []byte(`"offsetTable"`))
	if i < 0 {
		return nil, fmt.Errorf("client: reset offset body has no offsetTable")
	}
	rest := bytes.TrimLeft(raw[i+len(`"offsetTable"`):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, fmt.Errorf("client: reset offset body: no ':' after offsetTable")
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	out := map[queue.MessageQueue]int64{}
	if len(rest) > 0 && rest[0] == '[' {
		var pairs [][]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(rest))
		if err := dec.Decode(&pairs); err != nil {
			return nil, fmt.Errorf("client: reset offset body: %w", err)
		}
		for _, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("client: reset offset body: pair of %d elements", len(p))
			}
			var mq queue.MessageQueue
			var off int64
			if err := json.Unmarshal(p[0], &mq); err != nil {
				return nil, fmt.Errorf("client: reset offset body: %w", err)
			}
			if err := json.Unmarshal(p[1], &off); err != nil {
				return nil, fmt.Errorf("client: reset offset body: %w", err)
			}
			out[mq] = off
		}
		return out, nil
	}
	if len(rest) == 0 || rest[0] != '{' {
		return nil, fmt.Errorf("client: reset offset body: offsetTable is not an object")
	}
	rest = rest[1:]
	for {
		rest = bytes.TrimLeft(rest, " \t\r\n,")
		if len(rest) == 0 {
			return nil, fmt.Errorf("client: reset offset body: truncated")
		}
		if rest[0] == '}' {
			return out, nil
		}
		var keyRaw []byte
		if rest[0] == '"' { // a key serialized as a JSON string
			dec := json.NewDecoder(bytes.NewReader(rest))
			var s string
			if err := dec.Decode(&s); err != nil {
				return nil, fmt.Errorf("client: reset offset body: %w", err)
			}
			keyRaw, rest = []byte(s), rest[dec.InputOffset():]
		} else {
			end := bytes.IndexByte(rest, '}')
			if rest[0] != '{' || end < 0 {
				return nil, fmt.Errorf("client: reset offset body: bad key")
			}
			keyRaw, rest = rest[:end+1], rest[end+1:]
		}
		var mq queue.MessageQueue
		if err := json.Unmarshal(keyRaw, &mq); err != nil {
			return nil, fmt.Errorf("client: reset offset body: key %s: %w", keyRaw, err)
		}
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			return nil, fmt.Errorf("client: reset offset body: no value for %v", mq)
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		n := 0
		for n < len(rest) && (rest[n] == '-' || rest[n] >= '0' && rest[n] <= '9') {
			n++
		}
		off, err := strconv.ParseInt(string(rest[:n]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("client: reset offset body: offset of %v: %w", mq, err)
		}
		out[mq] = off
		rest = rest[n:]
	}
}
