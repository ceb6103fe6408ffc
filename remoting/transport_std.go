package remoting

import (
	"errors"
	"io"
	"net"
	"time"
)

// stdTransport is a net.Conn under a Conn.
type stdTransport struct {
	nc           net.Conn
	writeTimeout time.Duration
}

// write sends bufs with writev where the connection has it (TCP).
func (t stdTransport) write(bufs [][]byte) error {
	if t.writeTimeout > 0 {
		if err := t.nc.SetWriteDeadline(time.Now().Add(t.writeTimeout)); err != nil {
			return err
		}
	}
	if len(bufs) == 1 {
		_, err := t.nc.Write(bufs[0])
		return err
	}
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(t.nc)
	return err
}

func (t stdTransport) close() error { return t.nc.Close() }

type stdListener struct{ ln net.Listener }

func (l stdListener) close() error { return l.ln.Close() }

func (s *Server) listenStd() (listener, string, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, "", err
	}
	if !s.spawn(func() { s.acceptStd(ln) }) {
		ln.Close()
		return nil, "", ErrClosed
	}
	return stdListener{ln}, ln.Addr().String(), nil
}

func (s *Server) acceptStd(ln net.Listener) {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("remoting: accept failed", "addr", ln.Addr().String(), "err", err, "retry", backoff)
			select {
			case <-s.stop:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if s.cfg.TLSMode != TLSDisabled {
			if !s.spawn(func() { s.negotiateStd(nc) }) {
				nc.Close()
			}
			continue
		}
		c := s.addConn(stdTransport{nc, s.cfg.WriteTimeout}, nc.RemoteAddr().String(), nc.LocalAddr().String())
		if c == nil || !s.spawn(func() { readLoop(c, nc) }) {
			nc.Close()
			if c != nil {
				c.closeWith(ErrClosed)
			}
		}
	}
}

// readLoop feeds everything the peer sends to c until the connection fails.
// Bytes read together with an error are dispatched first, so frames sent
// just before the peer closed are not lost.
func readLoop(c *Conn, nc net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := nc.Read(buf)
		if n > 0 {
			if ferr := c.feed(buf[:n]); ferr != nil {
				c.protocolError(ferr)
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("closed by peer")
			}
			c.closeWith(err)
			return
		}
	}
}
