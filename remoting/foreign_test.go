package remoting

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestGRPCClientToldApart is a RocketMQ 5 SDK pointed at the remoting port,
// over a real socket on each transport: its HTTP/2 preface is logged once
// as a gRPC client, naming the gRPC endpoint when one is configured, and
// the client reads a GOAWAY saying the same instead of waiting for a
// timeout.
func TestGRPCClientToldApart(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		for _, hint := range []string{"10.0.0.7:8081", ""} {
			t.Run("hint="+hint, func(t *testing.T) {
				var logs logBuffer
				s := startServer(t, tr, func(c *ServerConfig) {
					c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
					c.GRPCAddrHint = hint
				}, nil)
				nc := rawConn(t, s.Addr())
				// What a gRPC client sends first: the preface and its
				// SETTINGS frame.
				settings := []byte{0, 0, 0, http2FrameSettings, 0, 0, 0, 0, 0}
				if _, err := nc.Write(append([]byte(http2Preface), settings...)); err != nil {
					t.Fatal(err)
				}
				nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				got, err := io.ReadAll(nc)
				if err != nil {
					t.Fatalf("read until the server closes: %v", err)
				}
				frames := splitHTTP2(t, got)
				if len(frames) != 2 || frames[0].typ != http2FrameSettings || len(frames[0].payload) != 0 || frames[1].typ != http2FrameGoAway {
					t.Fatalf("server answered %d frames %+v, want SETTINGS then GOAWAY", len(frames), frames)
				}
				ga := frames[1].payload
				if code := binary.BigEndian.Uint32(ga[4:8]); code != http2ErrProtocolError {
					t.Errorf("GOAWAY error code %d", code)
				}
				debug := string(ga[8:])
				want := "gRPC endpoint at " + hint
				if hint == "" {
					want = "this server has no gRPC endpoint"
				}
				if !strings.Contains(debug, "HTTP/2") || !strings.Contains(debug, want) {
					t.Errorf("GOAWAY debug data %q, want it to name HTTP/2 and %q", debug, want)
				}
				waitLoggedOnce(t, &logs, "opened an HTTP/2 connection (a gRPC client", want)
			})
		}
	})
}

// TestTLSClientHelloToldApart: a TLS client (a RocketMQ 5 SDK uses TLS by
// default) where tls.server.mode is disabled is logged once as that, with
// the gRPC endpoint.
func TestTLSClientHelloToldApart(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		var logs logBuffer
		s := startServer(t, tr, func(c *ServerConfig) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			c.GRPCAddrHint = "10.0.0.7:8081"
		}, nil)
		nc := rawConn(t, s.Addr())
		tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}) //nolint:gosec // a test client
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err == nil {
			t.Fatal("a TLS handshake succeeded against a server with TLS disabled")
		}
		waitLoggedOnce(t, &logs, "started a TLS handshake, but this server's tls.server.mode is disabled", "gRPC endpoint at 10.0.0.7:8081")
	})
}

// TestClassifyForeign covers the first bytes of each kind, however many of
// them the first read brought.
func TestClassifyForeign(t *testing.T) {
	for _, tc := range []struct {
		first string
		want  foreignKind
	}{
		{http2Preface, foreignHTTP2},
		{"PRI * HTTP/2.0\r\n", foreignHTTP2},
		{"PRI ", foreignHTTP2},
		{"PRI", foreignUnknown},
		{"PRIX", foreignUnknown},
		{"\x16\x03\x01\x02\x00\x01", foreignTLS},
		{"\x16\x00\x00\x00", foreignUnknown},
		{"GET / HTTP/1.1\r\n", foreignUnknown},
		{"", foreignUnknown},
	} {
		if got := classifyForeign([]byte(tc.first)); got != tc.want {
			t.Errorf("classifyForeign(%q) = %d, want %d", tc.first, got, tc.want)
		}
	}
}

type http2Frame struct {
	typ     byte
	payload []byte
}

func splitHTTP2(t *testing.T, b []byte) []http2Frame {
	t.Helper()
	var out []http2Frame
	for len(b) > 0 {
		if len(b) < http2FrameHeaderLen {
			t.Fatalf("%d trailing bytes: %q", len(b), b)
		}
		n := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		if stream := binary.BigEndian.Uint32(b[5:9]); stream != 0 || len(b) < http2FrameHeaderLen+n {
			t.Fatalf("frame on stream %d of %d bytes in %d", stream, n, len(b))
		}
		out = append(out, http2Frame{typ: b[3], payload: b[http2FrameHeaderLen : http2FrameHeaderLen+n]})
		b = b[http2FrameHeaderLen+n:]
	}
	return out
}

// waitLoggedOnce waits until a log line holds every one of parts, then
// checks that no second line does, a moment later.
func waitLoggedOnce(t *testing.T, logs *logBuffer, parts ...string) {
	t.Helper()
	count := func() int {
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				n++
			}
		}
		return n
	}
	testwait.For(t, testwait.Default, "the connection logged as what it is", func() bool { return count() > 0 })
	time.Sleep(50 * time.Millisecond) // a second line would follow at once
	if n := count(); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, logs.String())
	}
}
