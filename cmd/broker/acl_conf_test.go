package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/clitest"
)

// docs/acl.md's example: docs/acl/broker.conf turns ACL on with
// docs/acl/plain_acl.yml beside it, which parses, and signs as rocketmq2.
func TestExampleACLConf(t *testing.T) {
	parse := func(args ...string) (config.Config, error) { return parseArgs(noEnv, discard, args...) }
	dir := t.TempDir()
	cfg, err := parse("-c", "../../docs/acl/broker.conf", "--store-dir", dir, "--listen", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.ACLEnable || cfg.ACLFile != filepath.Join("../../docs/acl", "plain_acl.yml") ||
		cfg.Credentials.AccessKey != "rocketmq2" || cfg.Credentials.SecretKey != "12345678" {
		t.Fatalf("ACL config %v %q %+v", cfg.ACLEnable, cfg.ACLFile, cfg.Credentials)
	}
	b, err := broker.New(cfg) // loads plain_acl.yml
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	cfg, err = parse("-c", "../../docs/broker.conf", "--store-dir", dir, "--acl-file", "/etc/runnel/acl.yml")
	if err != nil || !cfg.ACLEnable || cfg.ACLFile != "/etc/runnel/acl.yml" {
		t.Fatalf("--acl-file: %v %v %q", err, cfg.ACLEnable, cfg.ACLFile)
	}
}

// aclDoc returns docs/acl.md before its ACL 2.0 section (plain ACL) and
// that section.
func aclDoc(t *testing.T) (plain, acl2 string) {
	t.Helper()
	data, err := os.ReadFile("../../docs/acl.md")
	if err != nil {
		t.Fatal(err)
	}
	plain, acl2, ok := strings.Cut(string(data), "\n## ACL 2.0: users and rules\n")
	if !ok {
		t.Fatal("docs/acl.md has no ACL 2.0 section")
	}
	return plain, acl2
}

// docConf is the broker config of the first broker.conf block in doc,
// every key of which the broker must honour.
func docConf(t *testing.T, doc string) config.Config {
	t.Helper()
	cfg := config.Default()
	ignored, err := cfg.ApplyProperties(strings.NewReader(clitest.FencedBlock(t, doc, "```properties\n")))
	if err != nil || len(ignored) > 0 {
		t.Fatalf("broker.conf: ignored %v, %v", ignored, err)
	}
	return cfg
}

// docs/acl.md shows a broker.conf and a plain_acl.yml; both
// must be what the broker reads without complaint.
func TestDocsACLExample(t *testing.T) {
	plain, _ := aclDoc(t)
	if cfg := docConf(t, plain); !cfg.ACLEnable || cfg.Credentials.AccessKey != "rocketmq2" {
		t.Fatalf("docs/acl.md broker.conf: %+v", cfg)
	}
	tb, err := acl.ParsePlain([]byte(clitest.FencedBlock(t, plain, "```yaml\n")))
	if err != nil || tb.Accounts() != 2 {
		t.Fatalf("docs/acl.md plain_acl.yml: %v", err)
	}
}

// docs/acl.md's ACL 2.0 broker.conf is read without complaint and starts a
// broker whose super users are the two it names.
func TestDocsACL2Example(t *testing.T) {
	_, acl2 := aclDoc(t)
	cfg := docConf(t, acl2)
	if !cfg.Auth.AuthenticationEnabled || !cfg.Auth.AuthorizationEnabled ||
		len(cfg.Auth.InitUsers) != 1 || cfg.Auth.InnerCredentials.AccessKey != "rocketmq" {
		t.Fatalf("docs/acl.md ACL 2.0 broker.conf: auth %+v", cfg.Auth)
	}
	cfg.StoreDir, cfg.ListenAddr = t.TempDir(), "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// docs/acl/broker-acl2.conf (ACL 2.0 with TLS enforced, docs/security.md)
// is read without complaint and starts a broker with both on.
func TestExampleACL2Conf(t *testing.T) {
	cfg, err := parseArgs(noEnv, discard, "-c", "../../docs/acl/broker-acl2.conf", "--store-dir", t.TempDir(), "--listen", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Auth.AuthenticationEnabled || !cfg.Auth.AuthorizationEnabled || len(cfg.Auth.InitUsers) != 1 ||
		cfg.Auth.InnerCredentials.AccessKey != "rocketmq-broker" || cfg.TLS.Mode != "enforcing" || !cfg.TLS.Enable {
		t.Fatalf("config: auth %+v, tls %+v", cfg.Auth, cfg.TLS)
	}
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
