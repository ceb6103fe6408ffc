// Package promserve serves a Prometheus registry at /metrics over HTTP,
// for the broker's and the name server's exporters: one listener, one
// goroutine, shut down by Close.
package promserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// shutdownTimeout bounds how long Close waits for scrapes in progress.
const shutdownTimeout = 5 * time.Second

// Server is a /metrics HTTP server.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// SplitAddr reads an exporter address as a flag gives it, host:port.
func SplitAddr(addr string) (host string, port int, err error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("metrics address %q: %v", addr, err)
	}
	p, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("metrics address %q: bad port", addr)
	}
	return host, int(p), nil
}

// Listen binds addr and serves g at /metrics until Close.
func Listen(addr string, g prometheus.Gatherer, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("promserve: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorLog: slogPrinter{log}}))
	s := &Server{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("promserve: serve", "addr", addr, "err", err)
		}
	}()
	return s, nil
}

// Addr returns the address listened on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, lets scrapes in progress finish (for a few
// seconds at most) and returns once the server's goroutine has.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	<-s.done
	return err
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Error("promserve: " + fmt.Sprint(v...)) }
