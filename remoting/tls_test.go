package remoting

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// devTLS is one generated certificate shared by the tests, with its PEM.
var devTLS = func() struct {
	cfg *tls.Config
	pem []byte
} {
	cert, certPEM, err := SelfSignedCertificate()
	if err != nil {
		panic(err)
	}
	return struct {
		cfg *tls.Config
		pem []byte
	}{&tls.Config{Certificates: []tls.Certificate{cert}}, certPEM}
}()

// startTLSServer starts an echo server in mode and counts its admitted
// connections.
func startTLSServer(t testing.TB, transport, mode string) (*Server, *atomic.Int32) {
	var admitted atomic.Int32
	s := startServer(t, transport, func(c *ServerConfig) {
		c.TLSMode = mode
		if mode != TLSDisabled {
			c.TLS = devTLS.cfg
		}
		c.OnConnect = func(*Conn) { admitted.Add(1) }
	}, map[int16]Handler{codeEcho: echo})
	return s, &admitted
}

func tlsClient(t testing.TB) *Client {
	return newClient(t, func(c *ClientConfig) {
		var err error
		if c.TLS, err = ClientTLSConfig(""); err != nil {
			t.Fatal(err)
		}
	})
}

func echoOnce(ctx context.Context, cl *Client, addr string) error {
	req := protocol.NewRequest(codeEcho, map[string]string{"k": "v"}, []byte("body"))
	resp, err := cl.Invoke(ctx, addr, req)
	if err != nil {
		return err
	}
	if string(resp.Body) != "body" || resp.Ext("k") != "v" {
		return fmt.Errorf("echo answered %+v", resp)
	}
	return nil
}

// Each mode admits what Java's TlsModeHandler admits: permissive both kinds
// on one port, enforcing TLS only, disabled plain only; refused connections
// are closed before any handler (or OnConnect) sees them.
func TestTLSModes(t *testing.T) {
	ctx := context.Background()
	forEachTransport(t, func(t *testing.T, tr string) {
		t.Run("permissive", func(t *testing.T) {
			s, admitted := startTLSServer(t, tr, TLSPermissive)
			if err := echoOnce(ctx, tlsClient(t), s.Addr()); err != nil {
				t.Fatalf("TLS client: %v", err)
			}
			if err := echoOnce(ctx, newClient(t, nil), s.Addr()); err != nil {
				t.Fatalf("plain client: %v", err)
			}
			if n := admitted.Load(); n != 2 {
				t.Fatalf("%d connections admitted, want 2", n)
			}
		})
		t.Run("enforcing", func(t *testing.T) {
			s, admitted := startTLSServer(t, tr, TLSEnforcing)
			if err := echoOnce(ctx, tlsClient(t), s.Addr()); err != nil {
				t.Fatalf("TLS client: %v", err)
			}
			err := echoOnce(ctx, newClient(t, nil), s.Addr())
			if !errors.Is(err, ErrConnClosed) {
				t.Fatalf("plain client: %v, want the connection closed", err)
			}
			if n := admitted.Load(); n != 1 {
				t.Fatalf("%d connections admitted, want 1 (the TLS one)", n)
			}
		})
		t.Run("disabled", func(t *testing.T) {
			s, _ := startTLSServer(t, tr, TLSDisabled)
			if err := echoOnce(ctx, newClient(t, nil), s.Addr()); err != nil {
				t.Fatalf("plain client: %v", err)
			}
			err := echoOnce(ctx, tlsClient(t), s.Addr())
			if err == nil || !strings.Contains(err.Error(), "TLS handshake") || !strings.Contains(err.Error(), "tls.server.mode may be disabled") {
				t.Fatalf("TLS client against a plain server: %v", err)
			}
		})
	})
}

// A server that logs why it closed a TLS client in disabled mode says so.
func TestTLSDisabledLogsHandshake(t *testing.T) {
	var log logBuffer
	s := startServer(t, TransportNetpoll, func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) }, map[int16]Handler{codeEcho: echo})
	_ = echoOnce(context.Background(), tlsClient(t), s.Addr())
	testwait.For(t, testwait.Default, "the refusal logged", func() bool {
		return strings.Contains(log.String(), "started a TLS handshake, but this server's tls.server.mode is disabled")
	})
}

// With a CA file the client verifies the server: the generated
// certificate's own PEM passes, another CA's does not.
func TestTLSClientVerifies(t *testing.T) {
	s, _ := startTLSServer(t, TransportStd, TLSEnforcing)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pem")
	os.WriteFile(good, devTLS.pem, 0o600)
	_, otherPEM, err := SelfSignedCertificate()
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, otherPEM, 0o600)

	verifying := func(ca string) *Client {
		return newClient(t, func(c *ClientConfig) {
			if c.TLS, err = ClientTLSConfig(ca); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := echoOnce(context.Background(), verifying(good), s.Addr()); err != nil {
		t.Fatalf("client trusting the server's certificate: %v", err)
	}
	err = echoOnce(context.Background(), verifying(bad), s.Addr())
	var uae x509.UnknownAuthorityError
	if !errors.As(err, &uae) {
		t.Fatalf("client trusting another CA: %v, want an unknown authority", err)
	}
}

// The official Go client with WithTls(true) talks to a permissive and an
// enforcing server; without it, to the permissive one only. Its WithTls
// sets a process-wide default (every instance's options point to one
// RemotingClientConfig), read when a connection is dialled: each admin
// here dials right after it is made, and the last is plain, which leaves
// the default as other tests expect it.
func TestOfficialClientTLS(t *testing.T) {
	rlog.SetLogLevel("error")
	forEachTransport(t, func(t *testing.T, tr string) {
		for _, mode := range []string{TLSPermissive, TLSEnforcing} {
			t.Run(mode, func(t *testing.T) {
				s := startServer(t, tr, func(c *ServerConfig) {
					c.TLSMode, c.TLS = mode, devTLS.cfg
				}, map[int16]Handler{
					protocol.ReqGetAllTopicListFromNameServer: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
						resp := protocol.NewResponse(req, protocol.RespSuccess, "")
						resp.Body = []byte(`{"topicList":["TopicA"]}`)
						return resp
					},
				})
				list := func(useTLS bool) ([]string, error) { return official.TopicList(t, s.Addr(), admin.WithTls(useTLS)) }
				got, err := list(true)
				if err != nil || !slices.Equal(got, []string{"TopicA"}) {
					t.Fatalf("WithTls(true): %v, %v", got, err)
				}
				got, err = list(false)
				if mode == TLSPermissive && (err != nil || !slices.Equal(got, []string{"TopicA"})) {
					t.Fatalf("plain, permissive: %v, %v", got, err)
				}
				if mode == TLSEnforcing && err == nil {
					t.Fatalf("plain, enforcing: answered %v", got)
				}
			})
		}
	})
}

// startPermissiveTLS starts a TLS-permissive server with the dev
// certificate; mod, if set, adjusts the rest of its config.
func startPermissiveTLS(t *testing.T, tr string, mod func(*ServerConfig)) *Server {
	return startServer(t, tr, func(c *ServerConfig) {
		c.TLSMode, c.TLS = TLSPermissive, devTLS.cfg
		if mod != nil {
			mod(c)
		}
	}, nil)
}

// A connection that never sends its first byte is closed by the server's
// Close (and by IdleTimeout), not waited for.
func TestTLSPendingConnectionClosed(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startPermissiveTLS(t, tr, func(c *ServerConfig) { c.IdleTimeout = 200 * time.Millisecond })
		waitClosedByServer(t, rawConn(t, s.Addr()))

		s = startPermissiveTLS(t, tr, nil)
		nc := rawConn(t, s.Addr())
		testwait.For(t, testwait.Default, "the connection pending", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.mu.pending) == 1
		})
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		waitClosedByServer(t, nc)
		<-done
	})
}

// A client that starts a handshake and stalls is closed after
// HandshakeTimeout.
func TestTLSHandshakeTimeout(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startPermissiveTLS(t, tr, func(c *ServerConfig) { c.HandshakeTimeout = 200 * time.Millisecond })
		nc := rawConn(t, s.Addr())
		if _, err := nc.Write([]byte{tlsHandshakeByte, 0x03, 0x01}); err != nil {
			t.Fatal(err)
		}
		waitClosedByServer(t, nc)
	})
}

func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	cert, certPEM, err := SelfSignedCertificate()
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	os.WriteFile(certPath, certPEM, 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	encPath := filepath.Join(dir, "enc.key")
	os.WriteFile(encPath, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}), 0o600)

	var c TLSConfig
	for k, v := range map[string]string{
		"tls.server.mode": "Enforcing", "tls.server.certPath": certPath, "tls.server.keyPath": keyPath,
		"tls.server.need.client.auth": "optional", "tls.server.authClient": "true", "tls.server.trustCertPath": certPath,
		"tlsEnable": "true", "tls.client.authServer": "false",
	} {
		if known, err := c.Set(k, v); !known || err != nil {
			t.Fatalf("Set(%s, %s) = %v, %v", k, v, known, err)
		}
	}
	if known, _ := c.Set("brokerName", "x"); known {
		t.Fatal("brokerName taken for a TLS key")
	}
	mode, sc, err := c.ServerTLS()
	if err != nil || mode != TLSEnforcing {
		t.Fatalf("ServerTLS: %s, %v", mode, err)
	}
	if sc.ClientAuth != tls.VerifyClientCertIfGiven || sc.ClientCAs == nil || !slices.Equal(sc.Certificates[0].Certificate[0], cert.Certificate[0]) {
		t.Fatalf("server config from files: %+v", sc)
	}
	if cc, err := c.ClientTLS(); err != nil || cc == nil || !cc.InsecureSkipVerify {
		t.Fatalf("ClientTLS with tlsEnable and no trust path: %+v, %v", cc, err)
	}

	for _, tc := range []struct{ key, val, want string }{
		{"tls.server.mode", "sometimes", "tls.server.mode"},
		{"tls.server.need.client.auth", "always", "need.client.auth"},
		{"tlsEnable", "yes please", "not a boolean"},
	} {
		var c TLSConfig
		if _, err := c.Set(tc.key, tc.val); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%s, %s): %v, want an error naming %s", tc.key, tc.val, err, tc.want)
		}
	}
	for _, tc := range []struct {
		c    TLSConfig
		want string
	}{
		{TLSConfig{Mode: TLSPermissive, CertPath: certPath, KeyPath: encPath}, "is encrypted"},
		{TLSConfig{Mode: TLSPermissive, CertPath: certPath}, "keyPath is not"},
		{TLSConfig{Mode: TLSPermissive, CertPath: filepath.Join(dir, "missing"), KeyPath: keyPath}, "certPath"},
	} {
		if _, _, err := tc.c.ServerTLS(); !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ServerTLS(%+v): %v, want %q", tc.c, err, tc.want)
		}
	}
	// No certificate files: generated, as Java's test mode.
	if _, sc, err := (&TLSConfig{Mode: TLSPermissive}).ServerTLS(); err != nil || len(sc.Certificates) != 1 {
		t.Fatalf("generated: %v, %v", sc, err)
	}
	if mode, sc, err := (&TLSConfig{}).ServerTLS(); mode != TLSDisabled || sc != nil || err != nil {
		t.Fatalf("zero TLSConfig: %s, %v, %v", mode, sc, err)
	}
	if _, err := NewServer(ServerConfig{TLSMode: TLSPermissive}); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("permissive without a certificate: %v", err)
	}
}
