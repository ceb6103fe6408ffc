package remoting

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/runnelmq/runnel/internal/confdefault"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Transport names accepted by ServerConfig.Transport.
const (
	TransportNetpoll = "netpoll"
	TransportStd     = "std"
)

// ServerConfig configures a Server. Zero fields take the documented
// defaults; DefaultServerConfig returns them filled in.
type ServerConfig struct {
	// Addr is the listen address, e.g. "127.0.0.1:0". Default ":0".
	Addr string
	// Transport is "netpoll" (default) or "std" (the standard library's net,
	// one reader goroutine per connection; for benchmarks and as a fallback
	// where netpoll does not run).
	Transport string
	// MaxFrameSize is the largest inbound frame (the length field's value);
	// a larger one closes the connection. Default protocol.MaxFrameSize
	// (16 MiB, Java's NettyDecoder limit).
	MaxFrameSize int
	// MaxHeaderSize (key maxHeaderSize) is the largest request header
	// accepted. A request with a larger one is answered SYSTEM_ERROR with
	// the remark "request header of N bytes exceeds the limit of M bytes
	// (maxHeaderSize)" without being read whole: only its first and last
	// KiB are kept, to find its opaque (a frame whose opaque is in neither
	// cannot be answered, and closes the connection). Default
	// protocol.DefaultMaxHeaderSize (256 KiB: six times the 32 KiB of
	// properties Java stores, the most a JSON escape of them can grow);
	// negative: bounded by MaxFrameSize only.
	MaxHeaderSize int
	// MaxExtFields (key maxExtFields) is the most ext fields a request
	// header may carry; one with more is answered SYSTEM_ERROR with the
	// remark "request header has more than N ext fields (maxExtFields)",
	// and the fields past the limit are never allocated. Default
	// protocol.DefaultMaxExtFields (1024; RocketMQ's requests carry at
	// most about 30); negative: no limit.
	MaxExtFields int
	// IdleTimeout closes a connection that has sent no complete frame for
	// this long. Default 120s (RocketMQ's channelMaxIdleTimeSeconds);
	// negative disables it. The check runs every IdleTimeout/4, so a
	// connection closes between IdleTimeout and 1.25*IdleTimeout.
	IdleTimeout time.Duration
	// WriteTimeout bounds one write syscall batch to a peer that does not
	// read; when it expires the connection is closed. Default 10s.
	WriteTimeout time.Duration
	// CallTimeout is the timeout of Conn.Invoke when its context has no
	// deadline. Default 3s.
	CallTimeout time.Duration
	// OnConnect, if set, runs once for each accepted connection before its
	// first request is dispatched. OnClose, if set, runs once when it closes,
	// whatever the reason. Both run on transport goroutines and must not
	// block.
	OnConnect func(*Conn)
	OnClose   func(*Conn)
	// Logger receives connection-level events. Default slog.Default().
	Logger *slog.Logger
	// Interceptors see every request before its handler, and its answer
	// after; see Interceptor. Request hooks run in this order, Response
	// hooks in the reverse. Default none, which costs nothing per request.
	Interceptors []Interceptor
	// OutInterceptors see every request the server itself sends on its
	// connections (Conn.Invoke and friends: a broker asking a producer
	// about a transaction, a consumer for its running info), as a Client's
	// Interceptors see its requests: to sign them with the server's own
	// account. Default none.
	OutInterceptors []ClientInterceptor

	// TLSMode is RocketMQ's tls.server.mode: TLSDisabled (default),
	// TLSPermissive (TLS and plain connections on the one port) or
	// TLSEnforcing (TLS only); see tls_server.go. TLSConfig.ServerTLS
	// builds it and TLS from RocketMQ's keys.
	TLSMode string
	// TLS is the server's TLS configuration (its certificate); required
	// unless TLSMode is disabled.
	TLS *tls.Config
	// HandshakeTimeout bounds a TLS handshake; a connection that has not
	// completed one by then is closed. Default 10s.
	HandshakeTimeout time.Duration
	// GRPCAddrHint is the address of the gRPC endpoint RocketMQ 5 SDKs
	// should use (the broker's gRPC door), named in the log when one of
	// them connects here instead: a connection that opens with HTTP/2's
	// client preface (gRPC), or with a TLS ClientHello where TLSMode is
	// disabled, is logged once as what it is and closed; an HTTP/2 client
	// is also sent a GOAWAY saying so (foreign.go). Default "": the log
	// says this server has no gRPC endpoint.
	GRPCAddrHint string

	// NetpollPollers is the number of netpoll pollers (epoll loops). netpoll
	// keeps one set of pollers per process, so only the first netpoll Server
	// of a process applies it, and only if nothing used netpoll before.
	// Default 0: netpoll's own choice, GOMAXPROCS/20+1. Each poller blocks
	// in epoll_wait holding a P, so more pollers leave fewer Ps for the
	// handlers: 2 pollers on 2 cores gave 0.89x the round trips/s of 1 with
	// 16 connections.
	NetpollPollers int
	// NetpollKeepGOMAXPROCS leaves GOMAXPROCS alone. By default a netpoll
	// Server's Start adds one P per poller to the GOMAXPROCS it finds, as
	// each poller holds one while it waits (see addPollerProcs), unless that
	// value is the one an earlier Start set or the GOMAXPROCS environment
	// variable is set.
	NetpollKeepGOMAXPROCS bool
	// A netpoll connection has one reader goroutine that blocks on netpoll's
	// input buffer and is woken by the poller when bytes arrive; it copies
	// them out, splits frames and hands each request to a pooled worker
	// goroutine (a new one when none is parked; see workers.go). Running
	// netpoll's OnRequest callback instead (inline on the poller, or handed
	// to a goroutine) was tried: inline deadlocks netpoll v0.7.2 when a
	// connection closes during the callback (the close frees the operator,
	// which spins until the poller, busy running the callback, is done with
	// it), and handed-off callbacks lost frames that arrived just before the
	// peer closed. Inline also bought little: 1.005x the round trips/s of
	// the reader goroutine with 64 requests in flight, 0.99x with 16
	// connections, 1.04x with 1 in flight.
}

// limits returns the header limits of the server's requests.
func (c *ServerConfig) limits() protocol.Limits {
	return protocol.Limits{MaxHeaderSize: max(c.MaxHeaderSize, 0), MaxExtFields: max(c.MaxExtFields, 0)}
}

// DefaultServerConfig returns the defaults for every field.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		Addr:          ":0",
		Transport:     TransportNetpoll,
		MaxFrameSize:  protocol.MaxFrameSize,
		MaxHeaderSize: protocol.DefaultMaxHeaderSize,
		MaxExtFields:  protocol.DefaultMaxExtFields,
		IdleTimeout:   120 * time.Second,
		WriteTimeout:  10 * time.Second,
		CallTimeout:   3 * time.Second,
		Logger:        slog.Default(),
		TLSMode:       TLSDisabled,

		HandshakeTimeout: 10 * time.Second,
	}
}

// ensureDefaults fills zero fields with their defaults and validates the rest.
func (c *ServerConfig) ensureDefaults() error {
	d := DefaultServerConfig()
	c.Addr = cmp.Or(c.Addr, d.Addr)
	c.Transport = cmp.Or(c.Transport, d.Transport)
	if c.Transport != TransportNetpoll && c.Transport != TransportStd {
		return fmt.Errorf("%w: Transport %q, want %q or %q", ErrBadConfig, c.Transport, TransportNetpoll, TransportStd)
	}
	c.MaxFrameSize = cmp.Or(c.MaxFrameSize, d.MaxFrameSize)
	if c.MaxFrameSize < 4 {
		return fmt.Errorf("%w: MaxFrameSize %d is below 4", ErrBadConfig, c.MaxFrameSize)
	}
	c.MaxHeaderSize = cmp.Or(c.MaxHeaderSize, d.MaxHeaderSize)
	c.MaxExtFields = cmp.Or(c.MaxExtFields, d.MaxExtFields)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, d.IdleTimeout)
	confdefault.Positive(&c.WriteTimeout, d.WriteTimeout)
	confdefault.Positive(&c.CallTimeout, d.CallTimeout)
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	mode, err := ParseTLSMode(c.TLSMode)
	if err != nil {
		return err
	}
	c.TLSMode = mode
	if mode != TLSDisabled && (c.TLS == nil || len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil) {
		return fmt.Errorf("%w: TLSMode %s needs TLS with a certificate", ErrBadConfig, mode)
	}
	confdefault.Positive(&c.HandshakeTimeout, d.HandshakeTimeout)
	if c.NetpollPollers < 0 {
		return fmt.Errorf("%w: NetpollPollers %d is negative", ErrBadConfig, c.NetpollPollers)
	}
	return nil
}

// ClientConfig configures a Client. Zero fields take the documented
// defaults; DefaultClientConfig returns them filled in.
type ClientConfig struct {
	// DialTimeout bounds connecting to an address. Default 3s.
	DialTimeout time.Duration
	// Dial connects to an address. Default: TCP. InMemory.Dial connects to
	// a Server in memory, for tests that cut the network without sockets.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// CallTimeout is the timeout of a call whose context has no deadline.
	// Default 3s (the official client's default).
	CallTimeout time.Duration
	// WriteTimeout bounds one write syscall batch; when it expires the
	// connection is closed. Default 10s.
	WriteTimeout time.Duration
	// MaxFrameSize is the largest inbound frame; a larger one closes the
	// connection. Default protocol.MaxFrameSize.
	MaxFrameSize int
	// Logger receives connection-level events. Default slog.Default().
	Logger *slog.Logger
	// OnClose, if set, runs once each time a connection closes, with its
	// address, on the goroutine that closed it; it must not block.
	OnClose func(addr string)
	// Interceptors see every request the client sends before it is
	// written, and its outcome; see ClientInterceptor. Request hooks run in
	// this order, Response hooks in the reverse. Default none.
	Interceptors []ClientInterceptor
	// TLS, if set, makes every connection TLS (RocketMQ's tlsEnable), the
	// handshake completed within DialTimeout; ClientTLSConfig builds one.
	// Default nil: plain connections.
	TLS *tls.Config
}

// DefaultClientConfig returns the defaults for every field.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{
		DialTimeout:  3 * time.Second,
		CallTimeout:  3 * time.Second,
		WriteTimeout: 10 * time.Second,
		MaxFrameSize: protocol.MaxFrameSize,
		Logger:       slog.Default(),
	}
}

func (c *ClientConfig) ensureDefaults() {
	d := DefaultClientConfig()
	confdefault.Positive(&c.DialTimeout, d.DialTimeout)
	confdefault.Positive(&c.CallTimeout, d.CallTimeout)
	confdefault.Positive(&c.WriteTimeout, d.WriteTimeout)
	if c.MaxFrameSize < 4 {
		c.MaxFrameSize = d.MaxFrameSize
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
}
