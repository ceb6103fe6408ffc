package acl

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Checker.
type Options struct {
	// File is the plain_acl.yml to load. Required.
	File string
	// PollInterval is how often the file's modification time and size are
	// compared with the loaded one's, to reload it. Default 1s; negative
	// never reloads.
	PollInterval time.Duration
	// Logger receives reloads and files that fail to parse. Default
	// slog.Default().
	Logger *slog.Logger
}

// Checker decides requests against a plain_acl.yml, reloading it when it
// changes. Its methods are safe for concurrent use.
type Checker struct {
	opts   Options
	table  atomic.Pointer[Table]
	loaded struct { // guarded by reloadMu; the file the table came from
		mod  time.Time
		size int64
	}
	reloadMu sync.Mutex
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// Open loads opts.File and starts watching it. A file that is missing or
// does not parse is an error.
func Open(opts Options) (*Checker, error) {
	if opts.File == "" {
		return nil, errors.New("acl: Options.File is empty")
	}
	opts.PollInterval = cmp.Or(opts.PollInterval, time.Second)
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	c := &Checker{opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	if _, err := c.Reload(); err != nil {
		return nil, err
	}
	if opts.PollInterval < 0 {
		close(c.done)
		return c, nil
	}
	go c.watch()
	return c, nil
}

// Reload reads the file again if its modification time or size changed
// since it was loaded, and reports whether it did. A file that does not
// parse leaves the accounts in force and is an error.
func (c *Checker) Reload() (bool, error) {
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	fi, err := os.Stat(c.opts.File)
	if err != nil {
		return false, fmt.Errorf("acl: %w", err)
	}
	if c.table.Load() != nil && fi.ModTime().Equal(c.loaded.mod) && fi.Size() == c.loaded.size {
		return false, nil
	}
	data, err := os.ReadFile(c.opts.File)
	if err != nil {
		return false, fmt.Errorf("acl: %w", err)
	}
	// Remember the file even if it does not parse, so a bad file is
	// reported once, not at every poll.
	c.loaded.mod, c.loaded.size = fi.ModTime(), fi.Size()
	t, err := ParsePlain(data)
	if err != nil {
		return false, fmt.Errorf("%w (file %s)", err, c.opts.File)
	}
	c.table.Store(t)
	return true, nil
}

func (c *Checker) watch() {
	defer close(c.done)
	tick := time.NewTicker(c.opts.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		switch changed, err := c.Reload(); {
		case err != nil:
			c.opts.Logger.Error("acl: reload failed; previous accounts stay in force", "err", err)
		case changed:
			c.opts.Logger.Info("acl: reloaded", "file", c.opts.File, "accounts", c.table.Load().Accounts())
		}
	}
}

// Decide decides r against the accounts last loaded: nil, or an *Error.
func (c *Checker) Decide(r *Request) error { return c.table.Load().Decide(r) }

// Close stops watching the file. Checks keep working with the accounts
// last loaded.
func (c *Checker) Close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return nil
}
