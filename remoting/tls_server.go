package remoting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/cloudwego/netpoll"
)

// A server whose TLSMode is not disabled holds each new connection back
// until its first byte arrives (or IdleTimeout passes, or the server
// closes): 0x16 starts a TLS handshake, anything else a plain RocketMQ
// frame, as Java's TlsModeHandler decides. Only then is the connection
// added (OnConnect runs) and its reader started: a refused one is never
// seen by handlers.
//
// Plain connections keep their transport's own path (netpoll's zero-copy
// reader). TLS connections of either transport are a crypto/tls server
// over the accepted connection, read by readLoop and written through
// tls.Conn: netpoll has no TLS of its own, and a byte pipe under
// crypto/tls is what its net.Conn methods are for. A TLS connection so
// costs what a std one does plus the cipher, whichever transport accepted
// it.

// holdPending registers nc as accepted but not yet negotiated, so Close can
// close it; false when the server is closing.
func (s *Server) holdPending(nc io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return false
	}
	if s.mu.pending == nil {
		s.mu.pending = make(map[io.Closer]struct{})
	}
	s.mu.pending[nc] = struct{}{}
	return true
}

func (s *Server) releasePending(nc io.Closer) {
	s.mu.Lock()
	delete(s.mu.pending, nc)
	s.mu.Unlock()
}

// awaitFirstByte runs read (which blocks until the first byte) with nc
// closed when IdleTimeout passes first.
func (s *Server) awaitFirstByte(nc io.Closer, read func() (byte, error)) (byte, error) {
	if s.cfg.IdleTimeout > 0 {
		t := time.AfterFunc(s.cfg.IdleTimeout, func() { nc.Close() })
		defer t.Stop()
	}
	return read()
}

// admit decides what to do with a connection whose first byte is b: it
// returns true for a TLS handshake, false for a plain frame, or an error
// when the mode refuses it.
func (s *Server) admit(b byte, remote string) (bool, error) {
	isTLS := b == tlsHandshakeByte
	if !isTLS && s.cfg.TLSMode == TLSEnforcing {
		return false, fmt.Errorf("remoting: plain connection from %s refused: tls.server.mode is enforcing", remote)
	}
	return isTLS, nil
}

// handshake runs the server side of a TLS handshake over nc within
// HandshakeTimeout.
func (s *Server) handshake(nc net.Conn) (*tls.Conn, error) {
	tc := tls.Server(nc, s.cfg.TLS)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		tc.Close()
		return nil, fmt.Errorf("remoting: TLS handshake with %s: %w", nc.RemoteAddr(), err)
	}
	return tc, nil
}

// negotiate runs what both transports do with a new connection of a
// TLS-enabled server: hold it as pending, wait for its first byte (read),
// admit it, and, when it starts TLS, shake hands over tlsConn() (nc with
// its first byte still to read). tc is the TLS connection, nil for a plain
// one; a refused connection is closed, the reason logged, and ok false.
func (s *Server) negotiate(nc acceptedConn, read func() (byte, error), tlsConn func() net.Conn) (tc *tls.Conn, ok bool) {
	if !s.holdPending(nc) {
		nc.Close()
		return nil, false
	}
	b, err := s.awaitFirstByte(nc, read)
	var isTLS bool
	if err == nil {
		isTLS, err = s.admit(b, nc.RemoteAddr().String())
	}
	if err == nil && isTLS {
		tc, err = s.handshake(tlsConn())
	}
	s.releasePending(nc)
	if err != nil {
		s.refused(nc, err)
		return nil, false
	}
	return tc, true
}

// acceptedConn is what negotiate needs of an accepted connection, std or
// netpoll.
type acceptedConn interface {
	io.Closer
	RemoteAddr() net.Addr
}

// negotiateStd serves a std connection of a TLS-enabled server.
func (s *Server) negotiateStd(nc net.Conn) {
	var first [1]byte
	tc, ok := s.negotiate(nc, func() (byte, error) {
		_, err := io.ReadFull(nc, first[:])
		return first[0], err
	}, func() net.Conn { return &prefixConn{Conn: nc, prefix: first[:]} })
	switch {
	case !ok:
	case tc != nil:
		s.serveStream(stdTransport{tc, s.cfg.WriteTimeout}, tc, nil)
	default:
		s.serveStream(stdTransport{nc, s.cfg.WriteTimeout}, nc, first[:])
	}
}

// negotiateNetpoll serves a netpoll connection of a TLS-enabled server:
// negotiateStd's steps, but it peeks the first byte where std reads it, and
// serves plain connections on netpoll's own path.
func (s *Server) negotiateNetpoll(nc netpoll.Connection) {
	tc, ok := s.negotiate(nc, func() (byte, error) {
		p, err := nc.Reader().Peek(1)
		if err != nil {
			return 0, err
		}
		return p[0], nil
	}, func() net.Conn {
		// The peeked byte is still in netpoll's buffer: Read returns it.
		return netpollNetConn{nc}
	})
	switch {
	case !ok:
	case tc != nil:
		s.serveStream(tlsTransport{tc}, tc, nil)
	default:
		s.serveNetpoll(nc)
	}
}

// refused closes a connection that was not admitted and logs why.
func (s *Server) refused(nc io.Closer, err error) {
	nc.Close()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), errors.Is(err, netpoll.ErrConnClosed), errors.Is(err, netpoll.ErrEOF):
		s.log.Debug("remoting: connection closed before its first byte", "err", err)
	default:
		s.log.Warn("remoting: connection refused", "err", err)
	}
}

// serveStream adds a connection read through nc (a net.Conn or a tls.Conn)
// and reads it until it closes; first are bytes already read from it.
func (s *Server) serveStream(tr transport, nc net.Conn, first []byte) {
	c := s.addConn(tr, nc.RemoteAddr().String(), nc.LocalAddr().String())
	if c == nil {
		tr.close()
		return
	}
	if len(first) > 0 {
		if err := c.feed(first); err != nil {
			c.protocolError(err)
			return
		}
	}
	readLoop(c, nc)
}

// prefixConn is a net.Conn whose first reads return prefix, the bytes read
// from it to tell TLS from plain.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// netpollNetConn is a netpoll connection as crypto/tls's byte pipe. Its
// deadlines are no-ops: netpoll's fields for them are not safe for the
// concurrent use crypto/tls makes of them (a Close's close_notify beside a
// write), writes are bounded by the event loop's WriteTimeout and the
// handshake by its context. A write that panics racing the peer's close
// (see netpollTransport) fails instead.
type netpollNetConn struct{ netpoll.Connection }

func (c netpollNetConn) Write(b []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("remoting: netpoll write: %v", r)
		}
	}()
	return c.Connection.Write(b)
}

func (netpollNetConn) SetDeadline(time.Time) error      { return nil }
func (netpollNetConn) SetReadDeadline(time.Time) error  { return nil }
func (netpollNetConn) SetWriteDeadline(time.Time) error { return nil }

// tlsTransport writes to a TLS connection over netpoll, whose writes the
// event loop's WriteTimeout bounds.
type tlsTransport struct{ tc *tls.Conn }

// write encrypts each piece as records of its own: TLS copies what it
// encrypts anyway.
func (t tlsTransport) write(bufs [][]byte) error {
	for _, b := range bufs {
		if _, err := t.tc.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (t tlsTransport) close() error { return t.tc.Close() }
