package client

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client/internal/nsaddr"
	"github.com/runnelmq/runnel/internal/confdefault"
	"github.com/runnelmq/runnel/remoting"
)

// ClientConfig is what producers and consumers of one client instance
// share. Producers and consumers whose configs give the same client id
// (ClientIP@InstanceName) share one instance: one connection per broker,
// one heartbeat, one route table. The first to start decides the
// instance's settings.
type ClientConfig struct {
	// NameServerAddrs lists the name servers ("host:port"; an "http://"
	// prefix is accepted and stripped). Required; RocketMQ's namesrvAddr
	// (";"-separated) may be given as one entry.
	NameServerAddrs []string
	// InstanceName is the second half of the client id. Default: the
	// process id, as RocketMQ does. Give distinct names to clients in one
	// process that must look like separate consumers to the broker.
	InstanceName string
	// ClientIP is the first half of the client id. Default: the first
	// non-loopback IPv4 address of the host, else 127.0.0.1.
	ClientIP string

	// RouteRefreshInterval is how often routes are re-read from the name
	// servers. Default 30s.
	RouteRefreshInterval time.Duration
	// HeartbeatInterval is how often every known broker gets a heartbeat.
	// Default 30s.
	HeartbeatInterval time.Duration
	// PersistInterval is how often consumer offsets are written to their
	// store. Default 5s.
	PersistInterval time.Duration
	// RebalanceInterval is how often consumers re-split their queues even
	// without a notification from a broker. Default 20s.
	RebalanceInterval time.Duration
	// LockRenewInterval is how often orderly consumers renew their broker
	// locks. Default 20s.
	LockRenewInterval time.Duration
	// CallTimeout bounds one request to a name server or broker when the
	// caller's context has no deadline (pulls have their own). Default 3s.
	CallTimeout time.Duration

	// TLS makes every connection to name servers and brokers TLS (RocketMQ's
	// tlsEnable; the official clients' WithTls). Default false. The server
	// must run with tls.server.mode permissive or enforcing.
	TLS bool
	// TLSCAFile, with TLS, is a PEM file of the CA certificates servers are
	// verified against (chain and host name). Default "": the server's
	// certificate is not verified, as with the official Go client and
	// Java's default tls.client.authServer=false; the connection is
	// encrypted but the server not authenticated. That is what reaches a
	// dev broker's generated certificate.
	TLSCAFile string

	// Logger receives the client's events. Default: slog.Default().
	Logger *slog.Logger
	// Credentials sign every request, for name servers and brokers with
	// ACL (the official client's WithCredentials). Default none.
	Credentials acl.Credentials
}

// DefaultClientConfig returns the defaults; NameServerAddrs is empty and
// must be set.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{
		InstanceName:         strconv.Itoa(os.Getpid()),
		ClientIP:             localIPv4(),
		RouteRefreshInterval: 30 * time.Second,
		HeartbeatInterval:    30 * time.Second,
		PersistInterval:      5 * time.Second,
		RebalanceInterval:    20 * time.Second,
		LockRenewInterval:    20 * time.Second,
		CallTimeout:          3 * time.Second,
		Logger:               slog.Default(),
	}
}

// ensureDefaults fills zero fields and validates the rest.
func (c *ClientConfig) ensureDefaults() error {
	d := DefaultClientConfig()
	addrs, bad, ok := nsaddr.Split(c.NameServerAddrs)
	if !ok {
		return fmt.Errorf("%w: NameServerAddrs entry %q is not host:port", ErrBadConfig, bad)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: NameServerAddrs is empty", ErrBadConfig)
	}
	c.NameServerAddrs = addrs
	if c.InstanceName == "" {
		c.InstanceName = d.InstanceName
	}
	if strings.ContainsAny(c.InstanceName, "@/\\") {
		return fmt.Errorf("%w: InstanceName %q contains '@' or a path separator", ErrBadConfig, c.InstanceName)
	}
	if c.ClientIP == "" {
		c.ClientIP = d.ClientIP
	}
	if err := confdefault.Fill(ErrBadConfig,
		confdefault.Of("RouteRefreshInterval", &c.RouteRefreshInterval, d.RouteRefreshInterval),
		confdefault.Of("HeartbeatInterval", &c.HeartbeatInterval, d.HeartbeatInterval),
		confdefault.Of("PersistInterval", &c.PersistInterval, d.PersistInterval),
		confdefault.Of("RebalanceInterval", &c.RebalanceInterval, d.RebalanceInterval),
		confdefault.Of("LockRenewInterval", &c.LockRenewInterval, d.LockRenewInterval),
		confdefault.Of("CallTimeout", &c.CallTimeout, d.CallTimeout),
	); err != nil {
		return err
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.TLSCAFile != "" && !c.TLS {
		return fmt.Errorf("%w: TLSCAFile is set but TLS is not", ErrBadConfig)
	}
	if _, err := c.remotingConfig(); err != nil {
		return err
	}
	return nil
}

// ClientID is ClientIP@InstanceName, the id brokers know this client by.
func (c ClientConfig) ClientID() string { return c.ClientIP + "@" + c.InstanceName }

func (c ClientConfig) remotingConfig() (remoting.ClientConfig, error) {
	rc := remoting.DefaultClientConfig()
	rc.CallTimeout = c.CallTimeout
	rc.Logger = c.Logger
	rc.Interceptors = c.Credentials.Interceptor()
	if c.TLS {
		var err error
		if rc.TLS, err = remoting.ClientTLSConfig(c.TLSCAFile); err != nil {
			return rc, fmt.Errorf("%w: TLSCAFile: %v", ErrBadConfig, err)
		}
	}
	return rc, nil
}

// localIPv4 returns the first non-loopback IPv4 address, as RocketMQ's
// RemotingUtil.getLocalAddress prefers, or 127.0.0.1.
func localIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// discardLogger is for tests and tools that want silence.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
