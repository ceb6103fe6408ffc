package namesrv

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/namesrv/routeinfo"
	"github.com/runnelmq/runnel/remoting"
)

// ErrBadConfig is wrapped by configuration errors; the message names the
// bad field.
var ErrBadConfig = errors.New("namesrv: bad config")

// ErrAlreadyStarted is returned by a second call to Start or Run.
var ErrAlreadyStarted = errors.New("namesrv: already started")

// Config configures a Server. Start from DefaultConfig.
type Config struct {
	// ListenAddr is the address to serve on (RocketMQ listenPort). Default
	// ":9876".
	ListenAddr string
	// BrokerExpiry drops a broker silent for this long, unless it
	// registered with its own heartbeatTimeoutMillis. Default 120 s.
	BrokerExpiry time.Duration
	// ScanInterval is how often silent brokers are looked for (RocketMQ
	// scanNotActiveBrokerInterval). Default 5 s.
	ScanInterval time.Duration
	// IdleTimeout closes a connection that sends nothing for this long.
	// Default 120 s (RocketMQ's channelMaxIdleTimeSeconds); negative
	// disables it.
	IdleTimeout time.Duration
	// Transport is the remoting transport, "netpoll" (default) or "std".
	Transport string
	// TLS is RocketMQ's TLS configuration under its keys (tls.server.mode,
	// tls.server.certPath, tls.server.keyPath, ...); see
	// remoting.TLSConfig. Default zero: plain connections only.
	TLS remoting.TLSConfig
	// DeleteTopicsOnRegistration drops a master's topics missing from its
	// latest registration. Default false, as in RocketMQ. As there, it
	// suits only brokers that always register their whole table: Runnel's
	// broker, like Java's by default, registers a created topic alone
	// (registerIncrementBrokerData), which this would take as the deletion
	// of every other topic until the next whole-table registration (Java
	// pairs it with the broker's enableSingleTopicRegister, which Runnel
	// does not have).
	DeleteTopicsOnRegistration bool
	// Now is the clock of the route table. Default time.Now; tests inject
	// a fake one and call Server.ExpireBrokers.
	Now func() time.Time
	// Logger receives the server's logs. Default slog.Default().
	Logger *slog.Logger
	// Metrics configures the Prometheus exporter (metrics.go). Default off,
	// port 5558.
	Metrics MetricsConfig
	// ACLFile, if set, is a RocketMQ plain_acl.yml every request is checked
	// against (reloaded when it changes; see package acl): route queries
	// need a signed account, broker registration and everything else that
	// changes the routes an admin one (acl.go). Default "": no checks.
	ACLFile string
	// Auth turns ACL 2.0 on (AuthenticationEnabled, AuthorizationEnabled):
	// what changes the routes needs one of the name server's users, super
	// users all: InitUsers (the administrator) and InnerCredentials (the
	// account the brokers sign with, their
	// innerClientAuthenticationCredentials); route queries stay open to
	// anyone (acl.go). Its white lists add to those. Default off.
	Auth auth.Config
}

// DefaultConfig returns the defaults for every field.
func DefaultConfig() Config {
	return Config{
		ListenAddr:   ":9876",
		BrokerExpiry: routeinfo.DefaultBrokerExpiry,
		ScanInterval: 5 * time.Second,
		IdleTimeout:  120 * time.Second,
		Transport:    remoting.TransportNetpoll,
		Now:          time.Now,
		Logger:       slog.Default(),
		Metrics:      MetricsConfig{ExporterType: "DISABLE", PromPort: 5558},
	}
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.ListenAddr == "":
		return fmt.Errorf("%w: ListenAddr is empty", ErrBadConfig)
	case c.BrokerExpiry <= 0:
		return fmt.Errorf("%w: BrokerExpiry %v must be positive", ErrBadConfig, c.BrokerExpiry)
	case c.ScanInterval <= 0:
		return fmt.Errorf("%w: ScanInterval %v must be positive", ErrBadConfig, c.ScanInterval)
	case c.Transport != remoting.TransportNetpoll && c.Transport != remoting.TransportStd:
		return fmt.Errorf("%w: Transport %q is neither %q nor %q", ErrBadConfig, c.Transport,
			remoting.TransportNetpoll, remoting.TransportStd)
	}
	return c.Metrics.validate()
}

// ensureDefaults fills the fields that have no meaningful zero value.
func (c *Config) ensureDefaults() {
	d := DefaultConfig()
	if c.Transport == "" {
		c.Transport = d.Transport
	}
	if c.Now == nil {
		c.Now = d.Now
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = d.IdleTimeout
	}
}
