package remoting

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// InMemory connects clients to a Server without a socket: each Dial is one
// net.Pipe whose far end the server serves as an accepted connection, so
// the frames, handlers, interceptors and deferred answers are the real
// ones. Cut closes every connection made so far, as a network failure
// would (hashicorp/raft's InmemTransport is the model). Tests use it to
// cut a client off without racing a socket's close; the server need not
// listen (Start), but its connections close with it.
//
// Addresses of in-memory connections are in TEST-NET-1 (192.0.2.0/24,
// RFC 5737): parseable as host:port by code that records peers, and never
// a real host. The addr a client dials is only its key in the Client.
type InMemory struct {
	srv *Server

	mu    sync.Mutex
	next  int
	pipes []net.Conn
}

// NewInMemory returns an in-memory dialer for s.
func NewInMemory(s *Server) *InMemory { return &InMemory{srv: s} }

// Dial connects to the server in memory; it is a ClientConfig.Dial.
func (m *InMemory) Dial(ctx context.Context, _ string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.next++
	port := 10000 + m.next%50000
	m.mu.Unlock()
	client, server := net.Pipe()
	remote := fmt.Sprintf("192.0.2.1:%d", port)
	if err := m.srv.serveConn(server, remote, "192.0.2.2:10911"); err != nil {
		client.Close()
		return nil, err
	}
	m.mu.Lock()
	m.pipes = append(m.pipes, client)
	m.mu.Unlock()
	return client, nil
}

// Cut closes every connection dialled so far; both ends see it closed, and
// later Dials connect again.
func (m *InMemory) Cut() {
	m.mu.Lock()
	pipes := m.pipes
	m.pipes = nil
	m.mu.Unlock()
	for _, p := range pipes {
		p.Close()
	}
}

// serveConn serves nc, already connected, as an accepted connection with
// the given addresses (no TLS: an in-memory pipe has nothing to protect).
func (s *Server) serveConn(nc net.Conn, remote, local string) error {
	c := s.addConn(stdTransport{nc, s.cfg.WriteTimeout}, remote, local)
	if c == nil {
		nc.Close()
		return ErrClosed
	}
	if !s.spawn(func() { readLoop(c, nc) }) {
		nc.Close()
		c.closeWith(ErrClosed)
		return ErrClosed
	}
	return nil
}
