package remoting

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

const codeSecret int16 = 1004

// refuseCode is an interceptor that answers NO_PERMISSION to code, as ACL
// refuses a request it cannot verify.
func refuseCode(code int16) Interceptor {
	return Interceptor{Request: func(_ context.Context, c *Conn, req *protocol.Command) *protocol.Command {
		if req.Code != code {
			return nil
		}
		return protocol.NewResponse(req, protocol.RespNoPermission,
			fmt.Sprintf("no permission for request %d from %s", req.Code, c.RemoteAddr()))
	}}
}

func TestInterceptorRefusesWithRemark(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		var mu sync.Mutex
		var handled []int16
		record := func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			mu.Lock()
			handled = append(handled, req.Code)
			mu.Unlock()
			return echo(nil, nil, req)
		}
		s := startServer(t, tr, func(c *ServerConfig) {
			c.Interceptors = []Interceptor{refuseCode(codeSecret)}
		}, map[int16]Handler{codeEcho: record, codeSecret: record})
		cl := newClient(t, nil)
		ctx := context.Background()

		resp, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeSecret, nil, []byte("x")))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := cl.Conn(ctx, s.Addr())
		want := "no permission for request 1004 from " + c.LocalAddr()
		if resp.Code != protocol.RespNoPermission || resp.Remark != want || len(resp.Body) != 0 {
			t.Fatalf("refused request answered %v, want NO_PERMISSION %q", resp, want)
		}
		resp, err = cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte("y")))
		if err != nil || resp.Code != protocol.RespSuccess || string(resp.Body) != "y" {
			t.Fatalf("let-through request answered %v %v", resp, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(handled, []int16{codeEcho}) {
			t.Fatalf("handlers ran for %v; the refused code must not reach its handler", handled)
		}
	})
}

// observed is one call of an Interceptor's Response hook.
type observed struct {
	code, respCode int16
	elapsed        time.Duration
}

func TestInterceptorTimesRequests(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		const hold = 30 * time.Millisecond
		seen := make(chan observed, 10)
		parked := make(chan *Responder, 1)
		s := startServer(t, tr, func(c *ServerConfig) {
			c.Interceptors = []Interceptor{{Response: func(_ *Conn, req, resp *protocol.Command, elapsed time.Duration) {
				seen <- observed{req.Code, resp.Code, elapsed}
			}}}
		}, map[int16]Handler{
			codeHold: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				time.Sleep(hold) // the work being timed
				return protocol.NewResponse(req, protocol.RespSystemBusy, "busy")
			},
			codeDefer: func(ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
				parked <- c.Defer(ctx, req)
				return nil
			},
		})
		cl := newClient(t, nil)
		ctx := context.Background()

		if _, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeHold, nil, nil)); err != nil {
			t.Fatal(err)
		}
		if o := <-seen; o.code != codeHold || o.respCode != protocol.RespSystemBusy || o.elapsed < hold {
			t.Fatalf("observed %+v, want code %d answered SYSTEM_BUSY after at least %v", o, codeHold, hold)
		}
		// Unknown codes are timed too, with the transport's refusal.
		if _, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(4242, nil, nil)); err != nil {
			t.Fatal(err)
		}
		if o := <-seen; o.code != 4242 || o.respCode != protocol.RespRequestCodeNotSupported {
			t.Fatalf("observed %+v for an unknown code", o)
		}

		// A deferred answer is observed when it is given, not when the
		// handler returns.
		done := invokeAsync(t, cl, s.Addr(), protocol.NewRequest(codeDefer, nil, nil))
		r := <-parked
		select {
		case o := <-seen:
			t.Fatalf("observed %+v before the deferred answer", o)
		default:
		}
		time.Sleep(hold) // the time the answer is held
		if err := r.Respond(&protocol.Command{Code: protocol.RespSuccess, Remark: "later"}); err != nil {
			t.Fatal(err)
		}
		if o := <-seen; o.code != codeDefer || o.respCode != protocol.RespSuccess || o.elapsed < hold {
			t.Fatalf("deferred answer observed as %+v", o)
		}
		if resp := <-done; resp.Remark != "later" {
			t.Fatalf("deferred answer %v", resp)
		}
	})
}

// sign is a stand-in for ACL's signature: an HMAC over the sorted ext
// values and the body.
func sign(secret string, ext map[string]string, body []byte) string {
	keys := make([]string, 0, len(ext))
	for k := range ext {
		if k != "Signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	m := hmac.New(sha1.New, []byte(secret))
	for _, k := range keys {
		m.Write([]byte(ext[k]))
	}
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestClientInterceptorSignsRequests(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		verified := make(chan string, 4)
		s := startServer(t, tr, nil, map[int16]Handler{
			codeEcho: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				if req.Ext("AccessKey") != "ak" || req.Ext("Signature") != sign("sk", req.ExtFields, req.Body) {
					verified <- "bad signature: " + req.String()
					return protocol.NewResponse(req, protocol.RespNoPermission, "bad signature")
				}
				verified <- req.Ext("topic")
				return protocol.NewResponse(req, protocol.RespSuccess, "")
			},
		})
		type outcome struct {
			code  int16
			err   error
			signd bool
		}
		outcomes := make(chan outcome, 4)
		cl := newClient(t, func(c *ClientConfig) {
			c.Interceptors = []ClientInterceptor{{
				Request: func(addr string, req *protocol.Command) error {
					if addr != s.Addr() {
						return fmt.Errorf("request to %s, want %s", addr, s.Addr())
					}
					if req.Ext("topic") == "forbidden" {
						return errors.New("acl: no credentials for topic forbidden")
					}
					req.ExtFields["AccessKey"] = "ak"
					req.ExtFields["Signature"] = sign("sk", req.ExtFields, req.Body)
					return nil
				},
				Response: func(_ string, req, resp *protocol.Command, err error, _ time.Duration) {
					o := outcome{err: err, signd: req.Ext("Signature") != ""}
					if resp != nil {
						o.code = resp.Code
					}
					outcomes <- o
				},
			}}
		})
		ctx := context.Background()

		req := protocol.NewRequest(codeEcho, map[string]string{"topic": "t1"}, []byte("body"))
		resp, err := cl.Invoke(ctx, s.Addr(), req)
		if err != nil || resp.Code != protocol.RespSuccess {
			t.Fatalf("signed request answered %v %v", resp, err)
		}
		if got := <-verified; got != "t1" {
			t.Fatal(got)
		}
		if o := <-outcomes; o.code != protocol.RespSuccess || o.err != nil || !o.signd {
			t.Fatalf("Response hook saw %+v", o)
		}
		if len(req.ExtFields) != 1 {
			t.Fatalf("the caller's ext fields were changed: %v", req.ExtFields)
		}

		// Oneway and async requests are signed too.
		if err := cl.InvokeOneway(ctx, s.Addr(), protocol.NewRequest(codeEcho, map[string]string{"topic": "t2"}, nil)); err != nil {
			t.Fatal(err)
		}
		if got := <-verified; got != "t2" {
			t.Fatal(got)
		}
		done := make(chan error, 1)
		if err := cl.InvokeAsync(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, []byte("b")), func(_ *protocol.Command, err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
		if got := <-verified; got != "" {
			t.Fatal(got)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if o := <-outcomes; !o.signd || o.code != protocol.RespSuccess {
			t.Fatalf("async Response hook saw %+v", o)
		}

		// A hook's error fails the call without writing it.
		_, err = cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, map[string]string{"topic": "forbidden"}, nil))
		if err == nil || !strings.Contains(err.Error(), "no credentials") {
			t.Fatalf("call refused by the hook returned %v", err)
		}
		if _, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, map[string]string{"topic": "t3"}, nil)); err != nil {
			t.Fatal(err)
		}
		if got := <-verified; got != "t3" {
			t.Fatalf("the server saw %q after the refused call, want t3", got)
		}
	})
}

// TestClientInterceptorAppends checks the Append hook: the fields it adds
// reach the server beside the caller's, the caller's map is not copied
// (the hook sees it itself) nor changed, and a caller's own MoreExt is
// neither lost nor written into.
func TestClientInterceptorAppends(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		seen := make(chan map[string]string, 1)
		s := startServer(t, tr, nil, map[int16]Handler{
			codeEcho: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				seen <- req.ExtFields
				return protocol.NewResponse(req, protocol.RespSuccess, "")
			},
		})
		callerExt := map[string]string{"topic": "t1"}
		var sameMap bool
		cl := newClient(t, func(c *ClientConfig) {
			c.Interceptors = []ClientInterceptor{{Append: func(_ string, req *protocol.Command) error {
				sameMap = reflect.ValueOf(req.ExtFields).UnsafePointer() == reflect.ValueOf(callerExt).UnsafePointer()
				req.MoreExt = append(req.MoreExt, protocol.Field{Key: "AccessKey", Value: "ak"})
				return nil
			}}}
		})
		callerMore := make([]protocol.Field, 1, 4)
		callerMore[0] = protocol.Field{Key: "mine", Value: "m"}
		req := protocol.NewRequest(codeEcho, callerExt, nil)
		req.MoreExt = callerMore
		if _, err := cl.Invoke(context.Background(), s.Addr(), req); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"topic": "t1", "mine": "m", "AccessKey": "ak"}
		if got := <-seen; !maps.Equal(got, want) {
			t.Fatalf("server saw %v, want %v", got, want)
		}
		if !sameMap {
			t.Error("the Append hook got a copy of the caller's map")
		}
		if len(callerExt) != 1 || len(req.MoreExt) != 1 || callerMore[:2][1] != (protocol.Field{}) {
			t.Fatalf("the caller's command was changed: %v %v %v", callerExt, req.MoreExt, callerMore[:2])
		}
	})
}

// TestClientRequestHookSeesMoreExt: a header sent as a field list
// (MoreExt, as our client sends a send's) is in the map a Request hook
// gets, and reaches the server once.
func TestClientRequestHookSeesMoreExt(t *testing.T) {
	seen := make(chan map[string]string, 1)
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{
		codeEcho: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			seen <- req.Fields()
			return protocol.NewResponse(req, protocol.RespSuccess, "")
		},
	})
	var hooked map[string]string
	cl := newClient(t, func(c *ClientConfig) {
		c.Interceptors = []ClientInterceptor{{Request: func(_ string, req *protocol.Command) error {
			hooked = maps.Clone(req.ExtFields)
			req.ExtFields["AccessKey"] = "ak"
			return nil
		}}}
	})
	req := protocol.NewRequest(codeEcho, nil, nil)
	req.MoreExt = []protocol.Field{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}}
	if _, err := cl.Invoke(context.Background(), s.Addr(), req); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "1", "b": "2"}; !maps.Equal(hooked, want) {
		t.Fatalf("the Request hook saw %v, want %v", hooked, want)
	}
	if got, want := <-seen, map[string]string{"a": "1", "b": "2", "AccessKey": "ak"}; !maps.Equal(got, want) {
		t.Fatalf("server saw %v, want %v", got, want)
	}
	if len(req.MoreExt) != 2 || req.ExtFields != nil {
		t.Fatalf("the caller's command was changed: %v %v", req.ExtFields, req.MoreExt)
	}
}

func TestInterceptorChainOrder(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	note := func(s string) {
		mu.Lock()
		trace = append(trace, s)
		mu.Unlock()
	}
	step := func(name string, refuse bool) Interceptor {
		return Interceptor{
			Request: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				note("req " + name)
				if refuse && req.Code == codeSecret {
					return protocol.NewResponse(req, protocol.RespNoPermission, "refused by "+name)
				}
				return nil
			},
			Response: func(_ *Conn, _, resp *protocol.Command, _ time.Duration) {
				note(fmt.Sprintf("resp %s %d", name, resp.Code))
			},
		}
	}
	handler := func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
		note("handler")
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	}
	s := startServer(t, TransportNetpoll, func(c *ServerConfig) {
		c.Interceptors = []Interceptor{step("a", false), step("b", true), {}, step("c", false)}
	}, map[int16]Handler{codeEcho: handler, codeSecret: handler})
	cl := newClient(t, nil)
	for _, tc := range []struct {
		code   int16
		remark string
		trace  []string
	}{
		{codeEcho, "", []string{"req a", "req b", "req c", "handler", "resp c 0", "resp b 0", "resp a 0"}},
		{codeSecret, "refused by b", []string{"req a", "req b", "resp b 16", "resp a 16"}},
	} {
		mu.Lock()
		trace = nil
		mu.Unlock()
		resp, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(tc.code, nil, nil))
		if err != nil || resp.Remark != tc.remark {
			t.Fatalf("code %d answered %v %v", tc.code, resp, err)
		}
		// The Response hooks run after the answer is written.
		testwait.For(t, testwait.Default, "the Response hooks", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(trace) == len(tc.trace)
		})
		mu.Lock()
		if !slices.Equal(trace, tc.trace) {
			t.Errorf("code %d: trace %q, want %q", tc.code, trace, tc.trace)
		}
		mu.Unlock()
	}
}

// A oneway request refused by an interceptor gets no answer; one let
// through reaches its handler, whose answer is not sent either.
func TestInterceptorsWithOnewayRequests(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		handled := make(chan *protocol.Command, 4)
		seen := make(chan observed, 4)
		s := startServer(t, tr, func(c *ServerConfig) {
			// The observer comes first: an interceptor after the one that
			// refuses does not see the request.
			c.Interceptors = []Interceptor{{Response: func(_ *Conn, req, resp *protocol.Command, _ time.Duration) {
				o := observed{code: req.Code, respCode: -1}
				if resp != nil {
					o.respCode = resp.Code
				}
				seen <- o
			}}, refuseCode(codeSecret)}
		}, map[int16]Handler{
			codeSecret: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				handled <- req
				return nil
			},
			codeEcho: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				handled <- req
				return echo(nil, nil, req)
			},
		})
		nc := rawConn(t, s.Addr())
		oneway := func(code int16, body string) []byte {
			req := protocol.NewRequest(code, nil, []byte(body))
			req.Flag = protocol.FlagOneway
			return mustFrame(t, req)
		}
		last := protocol.NewRequest(codeEcho, nil, []byte("last"))
		var buf []byte
		buf = append(buf, oneway(codeSecret, "refused")...)
		buf = append(buf, oneway(codeEcho, "let through")...)
		buf = append(buf, mustFrame(t, last)...)
		if _, err := nc.Write(buf); err != nil {
			t.Fatal(err)
		}
		// The first answer on the connection is the last request's: neither
		// oneway request was answered.
		resp, err := readFrame(t, nc)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Opaque != last.Opaque || string(resp.Body) != "last" {
			t.Fatalf("first answer %v, want the answer to opaque %d", resp, last.Opaque)
		}
		var bodies []string
		for range 2 {
			bodies = append(bodies, string((<-handled).Body))
		}
		sort.Strings(bodies)
		if !slices.Equal(bodies, []string{"last", "let through"}) {
			t.Fatalf("handlers saw %q; the refused oneway request must not reach its handler", bodies)
		}
		// The refusal of the oneway request was observed (not sent).
		got := map[observed]bool{}
		for range 3 {
			o := <-seen
			got[observed{code: o.code, respCode: o.respCode}] = true
		}
		for _, want := range []observed{{code: codeSecret, respCode: protocol.RespNoPermission}, {code: codeEcho, respCode: protocol.RespSuccess}} {
			if !got[want] {
				t.Errorf("Response hooks saw %v, missing %+v", got, want)
			}
		}
	})
}

// BenchmarkInterceptors measures round trips through a server with no
// interceptors, and with two (a Request hook letting everything through and
// a Response hook counting answers, as ACL and metrics would), in process.
//
//	go test -run '^$' -bench Interceptors ./remoting
func BenchmarkInterceptors(b *testing.B) {
	var answered atomic.Int64
	chain := []Interceptor{
		{Request: func(context.Context, *Conn, *protocol.Command) *protocol.Command { return nil }},
		{Response: func(_ *Conn, _, _ *protocol.Command, _ time.Duration) { answered.Add(1) }},
	}
	for _, n := range []int{0, 2} {
		b.Run(fmt.Sprintf("interceptors=%d/inflight=64", n), func(b *testing.B) {
			s := startServer(b, TransportNetpoll, func(c *ServerConfig) { c.Interceptors = chain[:n] }, map[int16]Handler{codeEcho: echo})
			benchRoundTrip(b, s.Addr(), 64, 1)
		})
	}
}

// TestServerOutInterceptorsSignServerCalls checks that a server's own
// request to a connected client (a broker asking a producer about a
// transaction) runs ServerConfig.OutInterceptors: the client's handler
// sees it signed, and the caller's command is left alone.
func TestServerOutInterceptorsSignServerCalls(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		conns := make(chan *Conn, 1)
		s := startServer(t, tr, func(c *ServerConfig) {
			c.OnConnect = func(conn *Conn) { conns <- conn }
			c.OutInterceptors = []ClientInterceptor{{Request: func(_ string, req *protocol.Command) error {
				req.ExtFields["AccessKey"] = "brokerAK"
				req.ExtFields["Signature"] = sign("brokerSK", req.ExtFields, req.Body)
				return nil
			}}}
		}, map[int16]Handler{codeEcho: echo})
		cl := newClient(t, nil)
		seen := make(chan string, 1)
		cl.Handle(protocol.ReqCheckTransactionState, func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			ok := req.Ext("AccessKey") == "brokerAK" && req.Ext("Signature") == sign("brokerSK", req.ExtFields, req.Body)
			seen <- fmt.Sprint(ok)
			return protocol.NewResponse(req, protocol.RespSuccess, "")
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := cl.Invoke(ctx, s.Addr(), protocol.NewRequest(codeEcho, nil, nil)); err != nil {
			t.Fatal(err)
		}
		conn := <-conns
		req := protocol.NewRequest(protocol.ReqCheckTransactionState, map[string]string{"msgId": "m1"}, []byte("b"))
		if _, err := conn.Invoke(ctx, req); err != nil {
			t.Fatal(err)
		}
		if got := <-seen; got != "true" {
			t.Fatal("the client saw the server's request unsigned or badly signed")
		}
		if len(req.ExtFields) != 1 {
			t.Fatalf("the caller's ext fields were changed: %v", req.ExtFields)
		}
	})
}

// TestInterceptorsAndUndecodedExtFields: a send's ext fields reach the
// server undecoded; a Request hook (ACL verifies a signature over all of
// them) sees them decoded unless it says it reads them with RangeExt
// (UndecodedExt), while a server with only Response hooks (metrics) leaves
// them undecoded for the handler's typed decode, and the Response hook
// reads them with Ext.
func TestInterceptorsAndUndecodedExtFields(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		for _, hook := range []string{"none", "decoded", "undecoded"} {
			withRequestHook := hook != "none"
			type seen struct {
				hook, handler map[string]string
				topic         string
			}
			got := make(chan seen, 1)
			// Atomic: the two sends may be served by two workers, which the
			// race detector sees as unordered (the socket between them
			// orders them, but it does not see that).
			var hookExt atomic.Pointer[map[string]string]
			var hookTopic atomic.Value
			ics := []Interceptor{{Response: func(_ *Conn, req, _ *protocol.Command, _ time.Duration) {
				hookTopic.Store(req.Ext("b"))
			}}}
			if withRequestHook {
				ics = append(ics, Interceptor{UndecodedExt: hook == "undecoded", Request: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
					m := req.ExtFields
					if hook == "undecoded" {
						// What a verifier that signs over every field reads.
						m = map[string]string{}
						req.RangeExt(func(k, v string) bool { m[k] = v; return true })
					}
					hookExt.Store(&m)
					return nil
				}})
			}
			s := startServer(t, tr, func(c *ServerConfig) { c.Interceptors = ics }, map[int16]Handler{
				protocol.ReqSendMessageV2: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
					h, err := protocol.DecodeSendMessageCommand(req)
					var hm map[string]string
					if p := hookExt.Load(); p != nil {
						hm = *p
					}
					got <- seen{hook: hm, handler: req.ExtFields, topic: h.Topic}
					if err != nil {
						return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
					}
					return protocol.NewResponse(req, protocol.RespSuccess, "")
				},
			})
			ext := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "T1", DefaultTopic: "TBW102",
				DefaultTopicQueueNums: 4, MaxReconsumeTimes: -1}.EncodeV2()
			for _, st := range []byte{protocol.SerializeJSON, protocol.SerializeRocketMQ} {
				req := protocol.NewRequest(protocol.ReqSendMessageV2, ext, []byte("body"))
				req.SerializeType = st
				resp, err := newClient(t, nil).Invoke(context.Background(), s.Addr(), req)
				if err != nil || resp.Code != protocol.RespSuccess {
					t.Fatalf("send: %v %v", resp, err)
				}
				g := <-got
				if g.topic != "T1" || hookTopic.Load() != "T1" {
					t.Fatalf("handler read topic %q, Response hook %q", g.topic, hookTopic.Load())
				}
				if withRequestHook && (g.hook["b"] != "T1" || len(g.hook) != len(ext)) {
					t.Fatalf("Request hook saw ext %v", g.hook)
				}
				if hook != "decoded" && g.handler != nil {
					t.Fatalf("ext fields decoded into a map with only Response hooks: %v", g.handler)
				}
			}
		}
	})
}

// TestAppendFieldsRoom: the copy of the caller's MoreExt that Append hooks
// append to is made with room for the fields they declare (a signed send
// grew 14 fields to room for 31 on the first append), and the caller's
// array is not written.
func TestAppendFieldsRoom(t *testing.T) {
	c := &Conn{}
	c.setOut([]ClientInterceptor{
		{Append: func(_ string, req *protocol.Command) error {
			req.MoreExt = append(req.MoreExt, protocol.Field{Key: "AccessKey", Value: "ak"})
			return nil
		}, AppendFields: 1},
		{Append: func(_ string, req *protocol.Command) error {
			req.MoreExt = append(req.MoreExt, protocol.Field{Key: "Signature", Value: "s"}, protocol.Field{Key: "X", Value: "x"})
			return nil
		}, AppendFields: 2},
	})
	caller := make([]protocol.Field, 14)
	for i := range caller {
		caller[i] = protocol.Field{Key: fmt.Sprint("k", i), Value: "v"}
	}
	cmd := protocol.Command{MoreExt: caller}
	if err := c.outgoing(&cmd); err != nil {
		t.Fatal(err)
	}
	out := cmd.MoreExt
	if len(out) != 17 || cap(out) != 17 {
		t.Fatalf("%d fields in room for %d; want 17 in 17 (grown rather than made to size)", len(out), cap(out))
	}
	if &out[0] == &caller[0] || out[14].Key != "AccessKey" || out[16].Key != "X" {
		t.Fatalf("fields %v", out[14:])
	}
}
