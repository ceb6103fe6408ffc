package main

import (
	"strings"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/namesrv"
)

// TestACLCredentials runs runnelctl against a cluster whose broker and
// name server check ACL: unsigned it is refused with Java's remark, a
// normal account may not create topics, the admin account (by flag or
// environment) may.
func TestACLCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	file := clitest.WriteFile(t, "plain_acl.yml", `accounts:
  - {accessKey: ctlAdmin1, secretKey: ctlAdminSecret, admin: true}
  - {accessKey: ctlUser1, secretKey: ctlUserSecret, defaultTopicPerm: PUB|SUB}
`)
	cl := cluster.Start(t,
		cluster.ConfigureNamesrv(func(cfg *namesrv.Config) { cfg.ACLFile = file }),
		cluster.Configure(func(_ int, cfg *config.Config) {
			cfg.ACLEnable, cfg.ACLFile = true, file
			cfg.Credentials = acl.Credentials{AccessKey: "ctlAdmin1", SecretKey: "ctlAdminSecret"}
		}))
	ns := []string{"-n", cl.NamesrvAddr()}
	const prefix = "org.apache.rocketmq.acl.common.AclException: "

	r := runCLI(t, nil, "", append(ns, "topic", "create", "ctlT1")...)
	if r.code != 1 || !strings.Contains(r.stderr, prefix+"No accessKey is configured") {
		t.Fatalf("unsigned: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, nil, "", append(ns, "--ak", "ctlUser1", "--sk", "ctlUserSecret", "topic", "create", "ctlT1")...)
	if r.code != 1 || !strings.Contains(r.stderr, prefix+"Need admin permission for request code=17, but accessKey=ctlUser1 is not") {
		t.Fatalf("normal account: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, nil, "", append(ns, "--ak", "ctlAdmin1", "--sk", "wrong-secret", "topic", "create", "ctlT1")...)
	if r.code != 1 || !strings.Contains(r.stderr, prefix+"Check signature failed for accessKey=ctlAdmin1") {
		t.Fatalf("wrong secret: exit %d, stderr %q", r.code, r.stderr)
	}
	env := map[string]string{"RUNNEL_ACCESS_KEY": "ctlAdmin1", "RUNNEL_SECRET_KEY": "ctlAdminSecret"}
	if r = runCLI(t, env, "", append(ns, "topic", "create", "ctlT1")...); r.code != 0 {
		t.Fatalf("admin by env: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, ok := cl.Broker(0).Core().Topic("ctlT1"); !ok {
		t.Fatal("topic not created by the admin account")
	}
	r = runCLI(t, nil, "hello\n", append(ns, "--ak", "ctlUser1", "--sk", "ctlUserSecret", "send", "--topic", "ctlT1")...)
	if r.code != 0 {
		t.Fatalf("send as the normal account: exit %d, stderr %q", r.code, r.stderr)
	}
	if r = runCLI(t, nil, "", append(ns, "--sk", "x", "broker", "list")...); r.code != 1 || !strings.Contains(r.stderr, "--sk needs --ak") {
		t.Fatalf("--sk alone: exit %d, stderr %q", r.code, r.stderr)
	}
}
