// Package remotingdoor is the broker's RocketMQ remoting front door: the
// TCP server that RocketMQ 4.x/5.x remoting clients (the official Go and
// Java clients, mqadmin, our own client) speak to, adapted onto the
// broker's core.
//
// The door is thin: each handler decodes a request's header and body
// (handlers.go: withHeader answers a header that does not decode), calls
// the core, and encodes its result; a core refusal (a *core.Error with its
// Reason) becomes a response code and remark in one place, codes.go. A
// connection is the core's Channel (channel.go): the core's calls to a
// client (notifications, transaction checks, forwarded admin calls) become
// RocketMQ requests there. Answers given later — a held pull, a forwarded
// admin call, a pushed reply — go through the connection's Responder
// (Conn.Defer), which owns their opaque, oneway and closed connections.
//
// What the door asks of the broker process beyond the core (its
// configuration, its runtime figures) is the Process interface; the door
// imports neither the process nor any other door.
//
// Invariants:
//   - every request gets an answer (none for oneway requests);
//   - a deferred answer carries its request's opaque, is dropped for a
//     oneway request, and is written at most once;
//   - the interceptors run in a fixed order: metrics first (it sees every
//     request, refused ones too), then access control (plain ACL, then
//     ACL 2.0, each deciding the needs of the door's table, acl.go), then
//     the process's own;
//   - with access control on, every code the door serves has an entry in
//     its table (TestEveryHandlerIsMapped); a code without one needs an
//     administrator.
package remotingdoor

import (
	"log/slog"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/acl/auth"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
)

// Process is what the door asks of the broker process beyond its core.
type Process interface {
	// BrokerConfig is the configuration in force as broker.conf properties
	// under RocketMQ's key names (GET_BROKER_CONFIG).
	BrokerConfig() map[string]string
	// UpdateBrokerConfig changes keys at run time (UPDATE_BROKER_CONFIG);
	// by names who asked. A refusal is a *core.Error.
	UpdateBrokerConfig(props map[string]string, by string) error
	// RuntimeInfo is the process's own runtime figures (its role, its raft
	// state) under RocketMQ's KVTable keys, added to the core's
	// (GET_BROKER_RUNTIME_INFO).
	RuntimeInfo() map[string]string
}

// Config configures a Door. Core, Process and Auth are required.
type Config struct {
	Core    *core.Core
	Process Process
	// Server configures the listener (address, transport, TLS, limits,
	// logger). The door sets its OnClose, and puts its own interceptors
	// before Server.Interceptors.
	Server remoting.ServerConfig
	// Metrics, if set, is the first interceptor: it counts every request
	// and its final answer.
	Metrics *remoting.Interceptor
	// Guard decides every request (plain ACL, ACL 2.0): its needs are the
	// door's table's (acl.go). Empty: access control is off.
	Guard acl.Guard
	// Cluster names the Cluster resource of the broker-wide requests
	// (brokerClusterName).
	Cluster string
	// Auth is ACL 2.0's users and ACLs: its admin requests are always
	// served (its checks are in Guard when it is enabled).
	Auth   *auth.Manager
	Logger *slog.Logger
}

// Door is the remoting front door of one broker.
type Door struct {
	core    *core.Core
	proc    Process
	auth    *auth.Manager
	cluster string
	srv     *remoting.Server
	log     *slog.Logger
}

// New returns a door that serves nothing until Start.
func New(cfg Config) (*Door, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := &Door{core: cfg.Core, proc: cfg.Process, auth: cfg.Auth, cluster: cfg.Cluster, log: cfg.Logger}
	scfg := cfg.Server
	scfg.OnClose = func(conn *remoting.Conn) { d.core.ChannelClosed(conn.ID()) }
	scfg.Interceptors = append(d.interceptors(cfg), scfg.Interceptors...)
	srv, err := remoting.NewServer(scfg)
	if err != nil {
		return nil, err
	}
	d.srv = srv
	d.registerHandlers()
	return d, nil
}

// interceptors are the door's own, in chain order (see the package doc).
func (d *Door) interceptors(cfg Config) []remoting.Interceptor {
	var ics []remoting.Interceptor
	if cfg.Metrics != nil {
		ics = append(ics, *cfg.Metrics)
	}
	if cfg.Guard.Enabled() {
		ics = append(ics, acl.NewCheckpoint(cfg.Guard, d.aclCodes(), d.cluster).Interceptor())
	}
	return ics
}

// Name names the door in the broker's logs.
func (d *Door) Name() string { return "remoting" }

// Start listens and serves in the background.
func (d *Door) Start() error { return d.srv.Start() }

// Addr is the address the door listens on, "" before Start.
func (d *Door) Addr() string { return d.srv.Addr() }

// StopAccepting refuses new connections; open ones are served on.
func (d *Door) StopAccepting() { d.srv.StopAccepting() }

// Close closes every connection and waits for the handlers.
func (d *Door) Close() error { return d.srv.Close() }

// Server is the door's remoting server (tests connect to it in memory).
func (d *Door) Server() *remoting.Server { return d.srv }
