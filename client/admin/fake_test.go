package admin

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// request is what a fake node received.
type request struct {
	Code int16
	Ext  map[string]string
	Body []byte
}

// fakeNode is a name server or broker that answers from per-code handler
// functions and records every request, so tests assert exactly what the
// admin sent.
type fakeNode struct {
	srv *remoting.Server

	mu       sync.Mutex
	handlers map[int16]func(req *protocol.Command) *protocol.Command
	got      []request
}

func startFake(t *testing.T) *fakeNode {
	t.Helper()
	f := &fakeNode{handlers: map[int16]func(*protocol.Command) *protocol.Command{}}
	cfg := remoting.DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Transport = remoting.TransportStd
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := remoting.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv.HandleDefault(func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		f.mu.Lock()
		f.got = append(f.got, request{Code: req.Code, Ext: maps.Clone(req.Fields()), Body: req.Body})
		h := f.handlers[req.Code]
		f.mu.Unlock()
		if h == nil {
			return protocol.NewResponse(req, protocol.RespRequestCodeNotSupported, "not supported by the fake")
		}
		return h(req)
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	f.srv = srv
	return f
}

func (f *fakeNode) addr() string { return f.srv.Addr() }

// on answers code with handler h.
func (f *fakeNode) on(code int16, h func(req *protocol.Command) *protocol.Command) {
	f.mu.Lock()
	f.handlers[code] = h
	f.mu.Unlock()
}

// reply answers code with a fixed code, ext and body.
func (f *fakeNode) reply(code int16, respCode int16, ext map[string]string, body []byte) {
	f.on(code, func(req *protocol.Command) *protocol.Command {
		resp := protocol.NewResponse(req, respCode, "")
		if respCode != protocol.RespSuccess {
			resp.Remark = "fake remark"
		}
		resp.ExtFields = ext
		resp.Body = body
		return resp
	})
}

// requests returns the requests received with code (all when code is -1).
func (f *fakeNode) requests(code int16) []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []request
	for _, r := range f.got {
		if code == -1 || r.Code == code {
			out = append(out, r)
		}
	}
	return out
}

// newAdmin returns an Admin for the name servers, closed at cleanup.
func newAdmin(t *testing.T, namesrvs ...string) *Admin {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NamesrvAddrs = namesrvs
	cfg.CallTimeout = 2 * time.Second
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// clusterBody is a GET_BROKER_CLUSTER_INFO body in fastjson's form, with
// bare integer brokerAddrs keys, as a Java name server writes it.
func clusterBody(cluster string, brokers map[string]string) []byte {
	b := []byte(`{"brokerAddrTable":{`)
	first := true
	var names []string
	for name, addr := range brokers {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"`+name+`":{"brokerAddrs":{0:"`+addr+`"},"brokerName":"`+name+`","cluster":"`+cluster+`"}`...)
		names = append(names, `"`+name+`"`)
	}
	b = append(b, `},"clusterAddrTable":{"`+cluster+`":[`...)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
	}
	return append(b, "]}}"...)
}

// routeBody is a GET_ROUTEINFO_BY_TOPIC body in fastjson's form; each
// broker has queues read and write queues.
func routeBody(cluster string, queues int, brokers map[string]string) []byte {
	b := []byte(`{"brokerDatas":[`)
	q := []byte(`"queueDatas":[`)
	first := true
	for name, addr := range brokers {
		if !first {
			b = append(b, ',')
			q = append(q, ',')
		}
		first = false
		b = append(b, `{"brokerAddrs":{0:"`+addr+`"},"brokerName":"`+name+`","cluster":"`+cluster+`"}`...)
		n := strconv.Itoa(queues)
		q = append(q, `{"brokerName":"`+name+`","perm":6,"readQueueNums":`+n+`,"topicSynFlag":0,"writeQueueNums":`+n+`}`...)
	}
	b = append(b, `],"filterServerTable":{},`...)
	b = append(b, q...)
	return append(b, "]}"...)
}
