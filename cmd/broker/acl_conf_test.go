package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/broker"
)

// The README's ACL example: docs/acl/broker.conf turns ACL on with
// docs/acl/plain_acl.yml beside it, which parses, and signs as rocketmq2.
func TestExampleACLConf(t *testing.T) {
	parse := func(args ...string) (broker.Config, error) {
		cmd := &cobra.Command{}
		var f flagValues
		var level string
		bindFlags(cmd.Flags(), &f, &level)
		if err := cmd.Flags().Parse(args); err != nil {
			return broker.Config{}, err
		}
		return buildConfig(cmd, &f, func(string) string { return "" }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
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
