package remoting

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// Handler processes one request. It returns the response, or nil when no
// answer is due or when it answers later: a handler that holds a request (a
// long-polled pull, a request forwarded to another peer) takes a Responder
// with conn.Defer(ctx, req) and answers through it. The response's Opaque
// and FlagResponse are set from req before it is sent. ctx is cancelled when the connection
// closes. Handlers run concurrently, each request on a goroutine of its own
// while its handler runs (a Server reuses them: see workers.go).
//
// No response is sent for a oneway request, whatever the handler returns.
type Handler func(ctx context.Context, conn *Conn, req *protocol.Command) *protocol.Command

// handlerTable maps request codes to handlers. Lookups are lock-free: the
// table is replaced as a whole when a handler is added.
type handlerTable struct {
	mu  sync.Mutex // serialises writers
	tab atomic.Pointer[handlerMap]
}

type handlerMap struct {
	byCode map[int16]Handler
	def    Handler
}

func (t *handlerTable) set(code int16, h Handler, isDefault bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := &handlerMap{byCode: make(map[int16]Handler)}
	if cur := t.tab.Load(); cur != nil {
		for k, v := range cur.byCode {
			next.byCode[k] = v
		}
		next.def = cur.def
	}
	if isDefault {
		next.def = h
	} else if h == nil {
		delete(next.byCode, code)
	} else {
		next.byCode[code] = h
	}
	t.tab.Store(next)
}

func (t *handlerTable) lookup(code int16) Handler {
	m := t.tab.Load()
	if m == nil {
		return nil
	}
	if h, ok := m.byCode[code]; ok {
		return h
	}
	return m.def
}

// serve runs the handler for req on c and sends its response.
func (t *handlerTable) serve(log *slog.Logger, c *Conn, req *protocol.Command) {
	c.answer(req, t.handle(log, c.ctx, c, req))
}

// handle runs the handler for req, or refuses a code without one.
func (t *handlerTable) handle(log *slog.Logger, ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
	if h := t.lookup(req.Code); h != nil {
		return callHandler(log, h, ctx, c, req)
	}
	return protocol.NewResponse(req, protocol.RespRequestCodeNotSupported,
		fmt.Sprintf("request code %d not supported", req.Code))
}

// callHandler runs h, turning a panic into a SYSTEM_ERROR response so one
// bad request cannot take the process down.
func callHandler(log *slog.Logger, h Handler, ctx context.Context, c *Conn, req *protocol.Command) (resp *protocol.Command) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("remoting: handler panicked", "code", req.Code, "remote", c.remote, "panic", p, "stack", string(debug.Stack()))
			resp = protocol.NewResponse(req, protocol.RespSystemError, fmt.Sprintf("remoting: handler for code %d panicked: %v", req.Code, p))
		}
	}()
	return h(ctx, c, req)
}
