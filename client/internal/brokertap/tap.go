// Package brokertap is a tap on a real broker for the client's tests: put
// into the broker's remoting server as an interceptor
// (config.Config.Interceptors), it records every request the broker is
// served and injects the faults a test asks for, which no real broker
// makes on cue: answering the next requests that match with a chosen
// response code instead of the broker (SYSTEM_BUSY to a send, SYSTEM_ERROR
// to a send-back), or closing their connection before the broker sees
// them. It also calls a client over the connection of its latest
// heartbeat, asking what a broker would not forward (a request naming
// another client id).
//
// Invariants: a request is recorded before a rule or the broker acts on
// it, so whatever answer a client has seen, its request is in Requests;
// rules are tried in the order they were added and each fires at most its
// count; the tap keeps copies, never the server's command.
//
// The broker behind the tap is the real one (the tests start it with
// integration/cluster); this package imports only remoting and
// remoting/protocol, like the client.
package brokertap

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// ErrNoClient is Invoke's error for a client id no heartbeat has named.
var ErrNoClient = errors.New("brokertap: no heartbeat from that client")

// Match selects requests.
type Match func(req *protocol.Command) bool

// Code matches requests with any of codes.
func Code(codes ...int16) Match {
	return func(req *protocol.Command) bool { return slices.Contains(codes, req.Code) }
}

// Sends matches the three send requests (SEND_MESSAGE, its V2 and
// SEND_BATCH_MESSAGE).
var Sends = Code(protocol.ReqSendMessage, protocol.ReqSendMessageV2, protocol.ReqSendBatchMessage)

// SendTo matches the sends to topic.
func SendTo(topic string) Match {
	return func(req *protocol.Command) bool {
		if !Sends(req) {
			return false
		}
		h, err := protocol.DecodeSendMessageHeader(req.Code, req.ExtFields)
		return err == nil && h.Topic == topic
	}
}

// Tap records and interferes; see the package doc. The zero value is not
// ready: use New.
type Tap struct {
	mu struct {
		sync.Mutex
		seen    []*protocol.Command
		rules   []*rule
		clients map[string]*remoting.Conn // client id -> connection of its latest heartbeat
	}
}

// rule is a fault for the next left requests that match.
type rule struct {
	match  Match
	left   int
	drop   bool // close the connection; else answer code and remark
	code   int16
	remark string
}

// New returns a tap with no rules.
func New() *Tap {
	t := &Tap{}
	t.mu.clients = map[string]*remoting.Conn{}
	return t
}

// Interceptor is the tap's place in a server's interceptor chain.
func (t *Tap) Interceptor() remoting.Interceptor {
	return remoting.Interceptor{Request: t.request}
}

// Refuse answers the next n requests that match with code and remark; the
// broker never sees them.
func (t *Tap) Refuse(match Match, n int, code int16, remark string) {
	t.add(&rule{match: match, left: n, code: code, remark: remark})
}

// Drop closes the connection of the next n requests that match, before the
// broker sees them: their caller gets a connection error, not an answer.
func (t *Tap) Drop(match Match, n int) {
	t.add(&rule{match: match, left: n, drop: true})
}

// Clear removes the rules still to fire.
func (t *Tap) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.rules = nil
}

func (t *Tap) add(r *rule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.rules = append(t.mu.rules, r)
}

// Requests returns the tap's copies of the requests seen that match, oldest
// first, refused and dropped ones included; the caller must not modify
// them. The tap keeps every request for its life, which is one test's.
func (t *Tap) Requests(match Match) []*protocol.Command {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*protocol.Command
	for _, req := range t.mu.seen {
		if match(req) {
			out = append(out, req)
		}
	}
	return out
}

// Count returns how many requests seen match.
func (t *Tap) Count(match Match) int { return len(t.Requests(match)) }

// Invoke sends req to the client clientID over the connection of its latest
// heartbeat and waits for the answer (a oneway req gets none: nil, nil).
func (t *Tap) Invoke(ctx context.Context, clientID string, req *protocol.Command) (*protocol.Command, error) {
	t.mu.Lock()
	c := t.mu.clients[clientID]
	t.mu.Unlock()
	if c == nil {
		return nil, ErrNoClient
	}
	if req.IsOneway() {
		return nil, c.InvokeOneway(req)
	}
	return c.Invoke(ctx, req)
}

// request is the interceptor's Request hook.
func (t *Tap) request(_ context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	cp := *req
	cp.ExtFields, cp.Body = maps.Clone(req.ExtFields), slices.Clone(req.Body)
	var id string
	if req.Code == protocol.ReqHeartBeat {
		if hb, err := protocol.DecodeHeartbeatData(req.Body); err == nil {
			id = hb.ClientID
		}
	}
	t.mu.Lock()
	t.mu.seen = append(t.mu.seen, &cp)
	if id != "" {
		t.mu.clients[id] = c
	}
	var fire *rule
	for i, r := range t.mu.rules {
		if r.match(&cp) {
			fire = r
			if r.left--; r.left <= 0 {
				t.mu.rules = slices.Delete(t.mu.rules, i, i+1)
			}
			break
		}
	}
	t.mu.Unlock()
	switch {
	case fire == nil:
		return nil
	case fire.drop:
		_ = c.Close()
		// The answer goes nowhere: the connection is closed; it only keeps
		// the broker from serving the request.
		return protocol.NewResponse(req, protocol.RespSystemError, "brokertap: connection dropped")
	default:
		return protocol.NewResponse(req, fire.code, fire.remark)
	}
}
