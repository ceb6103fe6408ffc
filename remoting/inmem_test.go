package remoting

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestInMemoryServesAndCuts: a client dialling in memory reaches the
// server's handlers with no listener, the server sees a parseable peer
// address, a server-initiated request reaches the client, and Cut closes
// the connection on both sides; the next call dials again.
func TestInMemoryServesAndCuts(t *testing.T) {
	var opened, closed atomic.Int32
	cfg := DefaultServerConfig()
	cfg.Logger = quietLogger()
	cfg.OnConnect = func(*Conn) { opened.Add(1) }
	cfg.OnClose = func(*Conn) { closed.Add(1) }
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Handle(protocol.ReqSendMessage, echo)
	peer := make(chan string, 1)
	s.Handle(protocol.ReqHeartBeat, func(ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
		peer <- c.RemoteAddr()
		// Ask the client something back over the same pipe.
		resp, err := c.Invoke(ctx, protocol.NewRequest(protocol.ReqGetConsumerRunningInfo, nil, nil))
		if err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		return protocol.NewResponse(req, protocol.RespSuccess, resp.Remark)
	})
	mem := NewInMemory(s)
	cl := newClient(t, func(c *ClientConfig) { c.Dial = mem.Dial })
	cl.Handle(protocol.ReqGetConsumerRunningInfo, func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
		return protocol.NewResponse(req, protocol.RespSuccess, "from the client")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	req := protocol.NewRequest(protocol.ReqSendMessage, map[string]string{"k": "v"}, []byte("body"))
	resp, err := cl.Invoke(ctx, "broker", req)
	if err != nil || resp.Code != protocol.RespSuccess || string(resp.Body) != "body" || resp.Ext("k") != "v" {
		t.Fatalf("echo in memory: %+v, %v", resp, err)
	}
	resp, err = cl.Invoke(ctx, "broker", protocol.NewRequest(protocol.ReqHeartBeat, nil, nil))
	if err != nil || resp.Remark != "from the client" {
		t.Fatalf("server-initiated call: %+v, %v", resp, err)
	}
	if _, err := netip.ParseAddrPort(<-peer); err != nil {
		t.Fatalf("peer address: %v", err)
	}
	if len(s.Conns()) != 1 {
		t.Fatalf("server holds %d connections", len(s.Conns()))
	}

	conn, err := cl.Conn(ctx, "broker")
	if err != nil {
		t.Fatal(err)
	}
	mem.Cut()
	select {
	case <-conn.Closed():
	case <-ctx.Done():
		t.Fatal("client side still open after Cut")
	}
	testwait.For(t, testwait.Default, "server side closed", func() bool { return closed.Load() == 1 && len(s.Conns()) == 0 })

	resp, err = cl.Invoke(ctx, "broker", req)
	if err != nil || resp.Code != protocol.RespSuccess || opened.Load() != 2 {
		t.Fatalf("after the cut: %+v, %v, %d connections opened", resp, err, opened.Load())
	}
	// A closed server refuses new in-memory connections.
	s.Close()
	if _, err := mem.Dial(ctx, "broker"); !errors.Is(err, ErrClosed) {
		t.Fatalf("dial a closed server: %v", err)
	}
}
