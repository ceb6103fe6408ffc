package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/console/sampler"
)

// Console is a running web console. Start it once and Close it once.
type Console struct {
	cfg      Config
	adm      *admin.Admin
	store    *sampler.Store
	gather   *gatherer
	sessions *sessions
	pages    *pages
	handler  http.Handler

	snap atomic.Pointer[snapshot]

	srv  *http.Server
	ln   net.Listener
	stop chan struct{}
	wg   sync.WaitGroup // the server and the sampling loop
	once sync.Once
}

// New validates cfg and prepares a console; nothing listens or reads the
// cluster until Start.
func New(cfg Config) (*Console, error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	adm, err := admin.New(cfg.Admin)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c := &Console{cfg: cfg, adm: adm, store: sampler.New(cfg.History), stop: make(chan struct{})}
	c.gather = newGatherer(c)
	c.sessions = newSessions(cfg)
	if c.pages, err = newPages(); err != nil {
		_ = adm.Close()
		return nil, err
	}
	c.snap.Store(&snapshot{Err: errors.New("console: the cluster has not been read yet")})
	c.handler = c.routes()
	return c, nil
}

// Handler serves the console's pages and API (Start serves it too).
func (c *Console) Handler() http.Handler { return c.handler }

// Start listens on Config.Listen, reads the cluster once, and serves until
// Close, reading the cluster again every SampleInterval.
func (c *Console) Start() error {
	ln, err := net.Listen("tcp", c.cfg.Listen)
	if err != nil {
		return fmt.Errorf("console: listen on %s: %w", c.cfg.Listen, err)
	}
	c.ln = ln
	c.srv = &http.Server{Handler: c.handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Admin.CallTimeout+c.cfg.Admin.DialTimeout)
	c.gather.sample(ctx)
	cancel()
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.cfg.Logger.Error("console: serve", "err", err)
		}
	}()
	go func() {
		defer c.wg.Done()
		c.sampleLoop()
	}()
	return nil
}

// sampleLoop reads the cluster every SampleInterval until Close.
func (c *Console) sampleLoop() {
	t := time.NewTicker(c.cfg.SampleInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { // a sample in flight ends with Close
			select {
			case <-c.stop:
				cancel()
			case <-done:
			}
		}()
		c.gather.sample(ctx)
		close(done)
		cancel()
	}
}

// Addr is the address the console listens on (after Start).
func (c *Console) Addr() string {
	if c.ln == nil {
		return ""
	}
	return c.ln.Addr().String()
}

// URL is the console's address as a browser opens it (after Start).
func (c *Console) URL() string { return "http://" + c.Addr() + "/" }

// Refresh reads the cluster's shape now, so that the lists show what just
// changed; the console's own changes call it before answering.
func (c *Console) Refresh(ctx context.Context) { c.gather.shape(ctx) }

// Sample reads the cluster now as the loop does, offsets and all.
func (c *Console) Sample(ctx context.Context) { c.gather.sample(ctx) }

// Close stops sampling and serving (requests in flight get 5 s to end)
// and closes the admin client. It is safe to call more than once.
func (c *Console) Close() error {
	var err error
	c.once.Do(func() {
		close(c.stop)
		if c.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = c.srv.Shutdown(ctx)
			cancel()
		}
		c.wg.Wait()
		err = errors.Join(err, c.adm.Close())
	})
	return err
}
