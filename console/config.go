package console

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/runnelmq/runnel/client/admin"
)

// DefaultListen is where the console serves unless told: loopback only.
const DefaultListen = "127.0.0.1:8080"

// ErrBadConfig is wrapped by configuration errors; the message names the
// bad field.
var ErrBadConfig = errors.New("console: bad config")

// Login is the console's own user, asked for on /login.
type Login struct {
	User, Password string
}

// Config configures a Console. Zero fields take DefaultConfig's values.
type Config struct {
	// Listen is the HTTP address, host:port; port 0 picks a free one.
	// Default DefaultListen (loopback: the console acts on the cluster
	// with its own rights, so it is not offered to the network unless an
	// address says so).
	Listen string
	// Admin configures how the cluster is reached: name servers, timeouts,
	// TLS and, for a cluster with ACL, the credentials every admin request
	// is signed with. Default admin.DefaultConfig().
	Admin admin.Config
	// Login, when set, is asked for before any page. It is required when
	// Admin.Credentials are set: otherwise anyone who reaches the console
	// would act with them. Default none.
	Login Login
	// SampleInterval is how often the cluster is read for the lists and
	// the charts. Default 5s.
	SampleInterval time.Duration
	// History is how far back the charts go. Default 10m.
	History time.Duration
	// TopicBudget and GroupBudget bound the topics whose offsets and the
	// groups whose progress one sample reads (each costs a request per
	// broker): the ones viewed lately first, the others in turn. Default
	// 500 and 200.
	TopicBudget, GroupBudget int
	// SessionTTL is how long a login lasts. Default 12h.
	SessionTTL time.Duration
	// PageSize is the rows of a list page unless the request asks.
	// Default 50.
	PageSize int
	// Logger receives the console's events. Default: discard.
	Logger *slog.Logger
	// Now is the clock sessions expire by and samples are stamped with.
	// Default time.Now.
	Now func() time.Time
}

// DefaultConfig returns the defaults of every field.
func DefaultConfig() Config {
	return Config{
		Listen:         DefaultListen,
		Admin:          admin.DefaultConfig(),
		SampleInterval: 5 * time.Second,
		History:        10 * time.Minute,
		TopicBudget:    500,
		GroupBudget:    200,
		SessionTTL:     12 * time.Hour,
		PageSize:       50,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:            time.Now,
	}
}

// ensureDefaults fills zero fields and validates the rest, naming the bad
// field.
func (c *Config) ensureDefaults() error {
	d := DefaultConfig()
	if c.Listen == "" {
		c.Listen = d.Listen
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("%w: Listen %q is not host:port", ErrBadConfig, c.Listen)
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"SampleInterval", &c.SampleInterval, d.SampleInterval}, {"History", &c.History, d.History}, {"SessionTTL", &c.SessionTTL, d.SessionTTL}} {
		if *f.v < 0 {
			return fmt.Errorf("%w: %s %v is negative", ErrBadConfig, f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"TopicBudget", &c.TopicBudget, d.TopicBudget}, {"GroupBudget", &c.GroupBudget, d.GroupBudget}, {"PageSize", &c.PageSize, d.PageSize}} {
		if *f.v < 0 {
			return fmt.Errorf("%w: %s %d is negative", ErrBadConfig, f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if (c.Login.User == "") != (c.Login.Password == "") {
		return fmt.Errorf("%w: Login needs both a user and a password", ErrBadConfig)
	}
	if !c.Admin.Credentials.Empty() && c.Login.User == "" {
		return fmt.Errorf("%w: Admin.Credentials are set but Login is not: anyone reaching the console would act with them (give a login: --user and --password, or --login-file)", ErrBadConfig)
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.Now == nil {
		c.Now = d.Now
	}
	return nil
}
