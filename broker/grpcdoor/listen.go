package grpcdoor

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"google.golang.org/grpc/credentials"
)

// TLS modes of the door's port (RocketMQ's tls.server.mode values).
const (
	// TLSPermissive serves TLS and plaintext on the one port (default).
	TLSPermissive = "permissive"
	// TLSEnforcing serves TLS only.
	TLSEnforcing = "enforcing"
	// TLSDisabled serves plaintext only.
	TLSDisabled = "disabled"
)

// tlsHandshakeByte starts a TLS record carrying a handshake; an HTTP/2
// connection starts with its preface, "PRI * HTTP/2.0".
const tlsHandshakeByte = 0x16

// sniffCreds are the server's transport credentials: they read the first
// byte of a connection and run the TLS handshake when it starts one, else
// pass the connection on as plaintext (h2c). gRPC runs ServerHandshake in
// the connection's own goroutine, under its connection timeout, so a slow
// client holds up no other.
type sniffCreds struct {
	mode string
	tls  *tls.Config // nil when mode is disabled
	log  *slog.Logger
}

// newSniffCreds returns the credentials for mode; cfg is the server's TLS
// configuration (ALPN h2 is added: gRPC clients require it).
func newSniffCreds(mode string, cfg *tls.Config, log *slog.Logger) *sniffCreds {
	c := &sniffCreds{mode: mode, log: log}
	if mode != TLSDisabled && cfg != nil {
		c.tls = cfg.Clone()
		c.tls.NextProtos = []string{"h2"}
		if c.tls.MinVersion == 0 {
			c.tls.MinVersion = tls.VersionTLS12
		}
	}
	return c
}

// errNotServed is a connection the port's mode does not serve.
var errNotServed = errors.New("grpcdoor: connection refused by the TLS mode")

func (c *sniffCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	br := bufio.NewReaderSize(raw, 64)
	first, err := br.Peek(1)
	if err != nil {
		return nil, nil, err
	}
	conn := &peekedConn{Conn: raw, r: br}
	if first[0] != tlsHandshakeByte {
		if c.mode == TLSEnforcing {
			c.log.Warn("grpcdoor: plaintext connection refused: the port serves TLS only (tls.server.mode=enforcing)", "remote", raw.RemoteAddr())
			return nil, nil, errNotServed
		}
		return conn, plainInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
	}
	if c.tls == nil {
		c.log.Warn("grpcdoor: a client started a TLS handshake on a plaintext port (tls.server.mode=disabled); enable TLS or have the client connect without it (Go SDK: rocketmq.client.enableSsl=false)", "remote", raw.RemoteAddr())
		return nil, nil, errNotServed
	}
	tc := tls.Server(conn, c.tls)
	if err := tc.HandshakeContext(context.Background()); err != nil {
		return nil, nil, fmt.Errorf("grpcdoor: TLS handshake with %s: %w", raw.RemoteAddr(), err)
	}
	return tc, credentials.TLSInfo{State: tc.ConnectionState(),
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (c *sniffCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("grpcdoor: server credentials only")
}

func (c *sniffCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}

func (c *sniffCreds) Clone() credentials.TransportCredentials {
	out := *c
	return &out
}

func (c *sniffCreds) OverrideServerName(string) error { return nil }

// plainInfo is a plaintext connection's AuthInfo.
type plainInfo struct{ credentials.CommonAuthInfo }

func (plainInfo) AuthType() string { return "insecure" }

// peekedConn is a connection whose first bytes were read ahead.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) { return p.r.Read(b) }
