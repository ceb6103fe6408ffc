package admin

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client/internal/nsaddr"
	"github.com/runnelmq/runnel/internal/confdefault"
)

// DefaultNamesrvAddr is the name server address used when none is given,
// RocketMQ's usual local one.
const DefaultNamesrvAddr = "127.0.0.1:9876"

// Config configures an Admin. Zero fields take the defaults of
// DefaultConfig.
type Config struct {
	// NamesrvAddrs lists the name servers ("host:port"; an "http://" prefix
	// is stripped, and RocketMQ's ";"-separated list may be given as one
	// entry). Questions go to the first that answers. Default
	// [DefaultNamesrvAddr].
	NamesrvAddrs []string
	// CallTimeout bounds one request when ctx has no earlier deadline.
	// Default 5s (Java's DefaultMQAdminExt timeoutMillis).
	CallTimeout time.Duration
	// DialTimeout bounds connecting to a node. Default 3s.
	DialTimeout time.Duration
	// Logger receives connection-level events. Default: discard (an admin
	// tool reports through its errors).
	Logger *slog.Logger
	// Credentials sign every request, for servers with ACL. Default none.
	Credentials acl.Credentials
	// TLS makes every connection TLS (RocketMQ's tlsEnable). Default
	// false.
	TLS bool
	// TLSCAFile, with TLS, is a PEM file of the CA certificates servers are
	// verified against. Default "": not verified, as the official clients
	// do (see client.ClientConfig.TLSCAFile).
	TLSCAFile string
}

// DefaultConfig returns the defaults for every field.
func DefaultConfig() Config {
	return Config{
		NamesrvAddrs: []string{DefaultNamesrvAddr},
		CallTimeout:  5 * time.Second,
		DialTimeout:  3 * time.Second,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// ensureDefaults fills zero fields and validates the rest, naming the bad
// field.
func (c *Config) ensureDefaults() error {
	d := DefaultConfig()
	addrs, bad, ok := nsaddr.Split(c.NamesrvAddrs)
	if !ok {
		return fmt.Errorf("%w: NamesrvAddrs entry %q is not host:port", ErrBadConfig, bad)
	}
	if len(addrs) == 0 {
		if len(c.NamesrvAddrs) > 0 {
			return fmt.Errorf("%w: NamesrvAddrs %q holds no address", ErrBadConfig, c.NamesrvAddrs)
		}
		addrs = d.NamesrvAddrs
	}
	c.NamesrvAddrs = addrs
	if err := confdefault.Fill(ErrBadConfig,
		confdefault.Of("CallTimeout", &c.CallTimeout, d.CallTimeout),
		confdefault.Of("DialTimeout", &c.DialTimeout, d.DialTimeout),
	); err != nil {
		return err
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return nil
}
