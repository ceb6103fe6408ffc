package cluster

import (
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client/admin"
)

// Admin is our admin client on the cluster's name servers, closed when the
// test ends.
func (c *Cluster) Admin(t testing.TB) *admin.Admin {
	t.Helper()
	return c.AdminAs(t, acl.Credentials{})
}

// AdminAs is Admin signing its requests with creds, for a cluster with
// ACL.
func (c *Cluster) AdminAs(t testing.TB, creds acl.Credentials) *admin.Admin {
	t.Helper()
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = c.NamesrvAddrs()
	cfg.Credentials = creds
	a, err := admin.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}
