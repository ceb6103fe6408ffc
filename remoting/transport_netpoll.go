package remoting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/netpoll"
)

// netpoll keeps its pollers and its runner in package globals, so they are
// configured once per process, by the first netpoll Server.
var netpollOnce sync.Once

func configureNetpoll(cfg *ServerConfig) error {
	var err error
	netpollOnce.Do(func() {
		c := netpoll.Config{
			PollerNum:    cfg.NetpollPollers,
			LoggerOutput: netpollLog{cfg.Logger},
		}
		if cfg.NetpollRunner == NetpollRunnerGo {
			c.Runner = func(_ context.Context, f func()) { go f() }
		}
		err = netpoll.Configure(c)
	})
	return err
}

// netpollLog routes netpoll's own log lines (it uses the log package) to
// the first netpoll Server's slog.Logger.
type netpollLog struct{ log *slog.Logger }

func (l netpollLog) Write(p []byte) (int, error) {
	l.log.Warn("netpoll: " + strings.TrimSpace(string(p)))
	return len(p), nil
}

// netpollTransport is the write half of a netpoll connection.
type netpollTransport struct{ nc netpoll.Connection }

func (t netpollTransport) write(b []byte) error {
	w := t.nc.Writer()
	if _, err := w.WriteBinary(b); err != nil {
		return err
	}
	return w.Flush()
}

func (t netpollTransport) close() error { return t.nc.Close() }

type netpollListener struct {
	evl netpoll.EventLoop
	// served is closed when the goroutine running evl.Serve returns.
	served chan struct{}
}

func (l *netpollListener) close() error {
	// The server closed its connections already; Shutdown returns once
	// netpoll has dropped them. The bound only matters if a connection is
	// mid-callback.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		// netpoll's Shutdown does nothing when Serve has not yet installed
		// its server (a Close right after Start), and Serve would then wait
		// for a quit signal forever. Repeat until Serve has returned.
		err := l.evl.Shutdown(ctx)
		select {
		case <-l.served:
			return err
		case <-ctx.Done():
			return fmt.Errorf("remoting: netpoll shutdown: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (s *Server) listenNetpoll() (listener, string, error) {
	if err := configureNetpoll(&s.cfg); err != nil {
		return nil, "", err
	}
	ln, err := netpoll.CreateListener("tcp", s.cfg.Addr)
	if err != nil {
		return nil, "", err
	}
	onRequest := netpoll.OnRequest(s.onNetpollRequest)
	if s.cfg.NetpollRunner == NetpollRunnerReader {
		onRequest = nil
	}
	evl, err := netpoll.NewEventLoop(onRequest,
		netpoll.WithOnPrepare(s.onNetpollPrepare),
		netpoll.WithWriteTimeout(s.cfg.WriteTimeout),
	)
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	addr := ln.Addr().String()
	served := make(chan struct{})
	if !s.spawn(func() {
		defer close(served)
		if err := evl.Serve(ln); err != nil && !errors.Is(err, netpoll.ErrConnClosed) {
			s.log.Debug("remoting: netpoll serve returned", "addr", addr, "err", err)
		}
	}) {
		ln.Close()
		return nil, "", ErrClosed
	}
	return &netpollListener{evl: evl, served: served}, addr, nil
}

// onNetpollPrepare runs on the poller when a connection is accepted, before
// it is registered for reading.
func (s *Server) onNetpollPrepare(nc netpoll.Connection) context.Context {
	c := s.addConn(netpollTransport{nc}, nc.RemoteAddr().String(), nc.LocalAddr().String())
	if c == nil {
		nc.Close()
		return context.Background()
	}
	nc.AddCloseCallback(func(netpoll.Connection) error {
		c.closeWith(errors.New("closed by peer"))
		return nil
	})
	if s.cfg.NetpollRunner == NetpollRunnerReader {
		if !s.spawn(func() { netpollReadLoop(c, nc) }) {
			c.closeWith(ErrClosed)
		}
	}
	return context.WithValue(context.Background(), ctxKey{}, c)
}

// onNetpollRequest runs when bytes have arrived. It consumes all of them,
// whole frames or not, and never blocks: netpoll calls it again only when
// the input buffer was empty before the next read. It also runs after the
// peer has closed while bytes remain, so frames sent just before a close are
// still dispatched.
func (s *Server) onNetpollRequest(ctx context.Context, nc netpoll.Connection) error {
	c := connFrom(ctx)
	r := nc.Reader()
	if c == nil {
		_ = r.Skip(r.Len())
		return nc.Close()
	}
	for n := r.Len(); n > 0; n = r.Len() {
		b, err := r.Next(n)
		if err == nil {
			err = c.feed(b)
			_ = r.Release()
		}
		if err != nil {
			// Closing inside the callback is netpoll's way; it stops the
			// callback loop. (It would deadlock if the callback ran on the
			// poller goroutine itself, which is why there is no inline
			// runner.)
			c.protocolError(err)
			return nil
		}
	}
	return nil
}

// netpollReadLoop is the NetpollRunnerReader mode: one goroutine per
// connection blocks until bytes are buffered, then feeds all of them. Bytes
// buffered before the peer closed are fed before the EOF is seen.
func netpollReadLoop(c *Conn, nc netpoll.Connection) {
	r := nc.Reader()
	for {
		if _, err := r.Peek(1); err != nil {
			c.closeWith(fmt.Errorf("read: %w", err))
			return
		}
		b, err := r.Next(r.Len())
		if err == nil {
			err = c.feed(b)
			_ = r.Release()
			if err != nil {
				c.protocolError(err)
				return
			}
			continue
		}
		c.closeWith(fmt.Errorf("read: %w", err))
		return
	}
}
