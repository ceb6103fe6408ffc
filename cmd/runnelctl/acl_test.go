package main

import (
	"strings"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting/protocol"
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

// TestUserPasswordKept creates an ACL 2.0 user with its password read
// from a file (never on the command line): runnelctl's output and errors
// never show it, nor does `user get` as a table; -o json, asked for,
// shows the record as the broker answers it. The user then signs with it.
func TestUserPasswordKept(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Auth.AuthenticationEnabled, cfg.Auth.AuthorizationEnabled = true, true
		cfg.Auth.InitUsers = []protocol.UserInfo{{Username: "ctlRoot", Password: "ctlRootSecret1"}}
	}))
	const secret = "alice-pw-8c1f"
	file := clitest.WriteFile(t, "alice.pw", secret+"\n")
	root := map[string]string{"RUNNEL_ACCESS_KEY": "ctlRoot", "RUNNEL_SECRET_KEY": "ctlRootSecret1"}
	ns := []string{"-n", cl.NamesrvAddr()}
	var seen strings.Builder
	for _, args := range [][]string{
		{"user", "create", "alice", "--password-file", file},
		{"user", "get", "alice"},
		{"user", "list"},
		{"user", "update", "alice", "--password-file", file, "--status", "enable"},
	} {
		r := runCLI(t, root, "", append(ns, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		seen.WriteString(r.stdout + r.stderr)
	}
	if strings.Contains(seen.String(), secret) {
		t.Fatalf("runnelctl showed the password unasked:\n%s", seen.String())
	}
	if r := runCLI(t, root, "", append(ns, "user", "get", "alice", "-o", "json")...); !strings.Contains(r.stdout, secret) {
		t.Fatalf("-o json: %q", r.stdout)
	}
	if r := runCLI(t, root, "", append(ns, "user", "create", "bob", "--password", "x", "--password-file", file)...); r.code == 0 {
		t.Fatal("--password and --password-file together were taken")
	}
	// alice signs with the password read from the file.
	if r := runCLI(t, map[string]string{"RUNNEL_ACCESS_KEY": "alice", "RUNNEL_SECRET_KEY": secret}, "", append(ns, "user", "list")...); !strings.Contains(r.stderr, "User:alice has no permission") {
		t.Fatalf("alice, authenticated but not allowed: exit %d, stderr %q", r.code, r.stderr)
	}
}
