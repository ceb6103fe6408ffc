package main

import (
	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
)

// tlsFlags are --tls and --tls-ca, shared by every command.
type tlsFlags struct {
	on     bool
	caFile string
}

func (f *tlsFlags) register(pf *pflag.FlagSet) {
	pf.BoolVar(&f.on, "tls", false, "connect over TLS (the servers' tls.server.mode must be permissive or enforcing)")
	pf.StringVar(&f.caFile, "tls-ca", "", "with --tls: verify servers against this PEM CA file (default: not verified, as the official clients)")
}

func (f *tlsFlags) client(cfg *client.ClientConfig) { cfg.TLS, cfg.TLSCAFile = f.on, f.caFile }

func (f *tlsFlags) admin(cfg *admin.Config) { cfg.TLS, cfg.TLSCAFile = f.on, f.caFile }
