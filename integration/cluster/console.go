package cluster

import (
	"github.com/runnelmq/runnel/console"
)

// StartConsole starts a web console against the cluster's name servers on
// a free loopback port, and closes it at cleanup. fn, when not nil,
// adjusts its config first (a login, credentials, a faster sample).
func (c *Cluster) StartConsole(fn func(cfg *console.Config)) *console.Console {
	c.t.Helper()
	cfg := console.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.NamesrvAddrs = c.NamesrvAddrs()
	cfg.Logger = c.opts.logger
	if fn != nil {
		fn(&cfg)
	}
	con, err := console.New(cfg)
	if err != nil {
		c.t.Fatalf("cluster: console: %v", err)
	}
	if err := con.Start(); err != nil {
		_ = con.Close()
		c.t.Fatalf("cluster: console: %v", err)
	}
	c.t.Cleanup(func() {
		if err := con.Close(); err != nil {
			c.t.Errorf("cluster: close console: %v", err)
		}
	})
	return con
}
