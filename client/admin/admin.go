package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Admin runs administrative operations against one set of name servers and
// the brokers they know. It is safe for concurrent use.
type Admin struct {
	cfg Config
	rc  *remoting.Client
	// sendSeq turns SendMessage over the writable queues of a topic.
	sendSeq atomic.Uint32
}

// New validates cfg and returns an Admin. It connects lazily: the first
// operation dials.
func New(cfg Config) (*Admin, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	rcfg := remoting.DefaultClientConfig()
	rcfg.CallTimeout = cfg.CallTimeout
	rcfg.DialTimeout = cfg.DialTimeout
	rcfg.Logger = cfg.Logger
	rcfg.Interceptors = cfg.Credentials.Interceptor()
	if cfg.TLSCAFile != "" && !cfg.TLS {
		return nil, fmt.Errorf("%w: TLSCAFile is set but TLS is not", ErrBadConfig)
	}
	if cfg.TLS {
		var err error
		if rcfg.TLS, err = remoting.ClientTLSConfig(cfg.TLSCAFile); err != nil {
			return nil, fmt.Errorf("%w: TLSCAFile: %v", ErrBadConfig, err)
		}
	}
	return &Admin{cfg: cfg, rc: remoting.NewClient(rcfg)}, nil
}

// Config returns the configuration in use, defaults filled in.
func (a *Admin) Config() Config { return a.cfg }

// Close closes every connection. Operations in flight fail.
func (a *Admin) Close() error { return a.rc.Close() }

// withTimeout bounds ctx by CallTimeout unless it has an earlier deadline.
func (a *Admin) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, a.cfg.CallTimeout)
}

// callNamesrv sends req to the name servers in order until one answers, and
// returns the answer of the first that does with SUCCESS; a non-success
// answer is returned as a *ResponseError without trying the others (they
// hold the same routes). Transport failures are tried on the next one.
func (a *Admin) callNamesrv(ctx context.Context, op string, req *protocol.Command) (*protocol.Command, error) {
	var errs []error
	for _, addr := range a.cfg.NamesrvAddrs {
		cctx, cancel := a.withTimeout(ctx)
		resp, err := a.rc.Invoke(cctx, addr, req)
		cancel()
		if err != nil {
			errs = append(errs, &CallError{Op: op, Node: "name server " + addr, Addr: addr, Err: err})
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if resp.Code != protocol.RespSuccess {
			return nil, responseError(op, "name server "+addr, resp)
		}
		return resp, nil
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, fmt.Errorf("admin: %s: %w", op, errors.Join(errs...))
}

// callEveryNamesrv sends req to every name server (deletions must reach
// all of them) and returns the first failure.
func (a *Admin) callEveryNamesrv(ctx context.Context, op string, req *protocol.Command) error {
	for _, addr := range a.cfg.NamesrvAddrs {
		cctx, cancel := a.withTimeout(ctx)
		resp, err := a.rc.Invoke(cctx, addr, req)
		cancel()
		if err != nil {
			return &CallError{Op: op, Node: "name server " + addr, Addr: addr, Err: err}
		}
		if resp.Code != protocol.RespSuccess {
			return responseError(op, "name server "+addr, resp)
		}
	}
	return nil
}

// Node is one broker node an operation went to.
type Node struct {
	Name string `json:"brokerName"` // broker group name; "" when only the address is known
	Addr string `json:"addr"`
}

func (b Node) String() string {
	if b.Name == "" {
		return "broker " + b.Addr
	}
	return fmt.Sprintf("broker %s (%s)", b.Name, b.Addr)
}

// callBroker sends req to b. A transport failure is wrapped with op and b;
// the answer is returned whatever its code, for the caller to judge.
func (a *Admin) callBroker(ctx context.Context, op string, b Node, req *protocol.Command) (*protocol.Command, error) {
	cctx, cancel := a.withTimeout(ctx)
	defer cancel()
	resp, err := a.rc.Invoke(cctx, b.Addr, req)
	if err != nil {
		return nil, &CallError{Op: op, Node: b.String(), Addr: b.Addr, Err: err}
	}
	return resp, nil
}

// callBrokerOK is callBroker that also turns a non-success answer into a
// *ResponseError.
func (a *Admin) callBrokerOK(ctx context.Context, op string, b Node, req *protocol.Command) (*protocol.Command, error) {
	resp, err := a.callBroker(ctx, op, b, req)
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.RespSuccess {
		return nil, responseError(op, b.String(), resp)
	}
	return resp, nil
}

// namesrvBody is the body of a name server's answer to req (callNamesrv)
// as decode reads it; a body it refuses fails naming op.
func namesrvBody[T any](ctx context.Context, a *Admin, op string, req *protocol.Command, decode func([]byte) (T, error)) (T, error) {
	var zero T
	resp, err := a.callNamesrv(ctx, op, req)
	if err != nil {
		return zero, err
	}
	v, err := decode(resp.Body)
	if err != nil {
		return zero, fmt.Errorf("admin: %s: %w", op, err)
	}
	return v, nil
}

// callEach sends req to every node in turn and hands each success to fn;
// an answer with a code of skip (the node has none of what was asked) is
// passed over. The first other failure, of a call or of fn, ends it.
func (a *Admin) callEach(ctx context.Context, op string, nodes []Node, req *protocol.Command, fn func(Node, *protocol.Command) error, skip ...int16) error {
	for _, n := range nodes {
		resp, err := a.callBroker(ctx, op, n, req)
		if err != nil {
			return err
		}
		if slices.Contains(skip, resp.Code) {
			continue
		}
		if resp.Code != protocol.RespSuccess {
			return responseError(op, n.String(), resp)
		}
		if err := fn(n, resp); err != nil {
			return err
		}
	}
	return nil
}

// callAll sends the write req to every target in turn and returns those
// that took it, stopping at the first failure.
func (a *Admin) callAll(ctx context.Context, op string, targets []Node, req *protocol.Command) ([]Node, error) {
	for i, n := range targets {
		if _, err := a.callBrokerOK(ctx, op, n, req); err != nil {
			return targets[:i], err
		}
	}
	return targets, nil
}

// callTopicBrokers sends a request of code naming topic (a
// TopicRequestHeader) to every broker of topic's route, as callEach does.
func (a *Admin) callTopicBrokers(ctx context.Context, op string, code int16, topic string, fn func(Node, *protocol.Command) error) error {
	nodes, err := a.routeNodes(ctx, topic)
	if err != nil {
		return err
	}
	req := protocol.NewRequest(code, protocol.TopicRequestHeader{Topic: topic}.Encode(), nil)
	return a.callEach(ctx, op, nodes, req, fn)
}

// routeNodes returns the brokers of topic's route, one node each.
func (a *Admin) routeNodes(ctx context.Context, topic string) ([]Node, error) {
	route, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	return routeRefs(route), nil
}
