package remoting

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/internal/syncbuf"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestMain(m *testing.M) {
	if transport := os.Getenv(benchServerEnv); transport != "" {
		// This process is the server half of a benchmark (bench_test.go).
		os.Exit(runBenchServer(transport))
	}
	leakcheck.VerifyTestMain(m, official.Leftovers...)
}

// transports are the server variants tests run against: netpoll (a reader
// goroutine per connection) and the standard library.
var transports = []string{TransportNetpoll, TransportStd}

// forEachTransport runs fn as a subtest per server transport.
func forEachTransport(t *testing.T, fn func(t *testing.T, transport string)) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) { fn(t, tr) })
	}
}

// logBuffer collects log output for assertions; safe for concurrent use.
type logBuffer = syncbuf.Buffer

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startServer starts a server on a loopback port and closes it when the
// test ends. mod may adjust the config and register handlers.
func startServer(t testing.TB, transport string, mod func(*ServerConfig), handlers map[int16]Handler) *Server {
	t.Helper()
	cfg := DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Transport = transport
	cfg.Logger = quietLogger()
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for code, h := range handlers {
		s.Handle(code, h)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newClient(t testing.TB, mod func(*ClientConfig)) *Client {
	t.Helper()
	cfg := DefaultClientConfig()
	cfg.Logger = quietLogger()
	if mod != nil {
		mod(&cfg)
	}
	c := NewClient(cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

// echo answers SUCCESS with the request's body and a copy of its "k" field.
func echo(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = req.Body
	resp.SetExt("k", req.Ext("k"))
	return resp
}

// rawConn dials addr with a plain socket, for tests that send bytes no
// Client would.
func rawConn(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc.(*net.TCPConn)
}

func mustFrame(t testing.TB, c *protocol.Command) []byte {
	t.Helper()
	b, err := protocol.EncodeFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readFrame reads one frame from a raw connection.
func readFrame(t *testing.T, nc net.Conn) (*protocol.Command, error) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	frame, err := protocol.ReadFrame(nc, protocol.MaxFrameSize)
	if err != nil {
		return nil, err
	}
	return protocol.DecodeFrame(frame)
}

// waitClosedByServer reads from nc until the server closes it.
func waitClosedByServer(t *testing.T, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, nc); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("server did not close the connection")
		}
	}
}
