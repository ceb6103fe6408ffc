package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
)

// TestACLCredentials consumes from a broker with ACL: with
// RUNNEL_ACCESS_KEY/RUNNEL_SECRET_KEY (or --ak/--sk) every message comes;
// without them the pulls are refused and none does.
func TestACLCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	file := clitest.WriteFile(t, "plain_acl.yml", `accounts:
  - {accessKey: cliAdmin1, secretKey: cliAdminSecret, admin: true}
  - {accessKey: cliUser1, secretKey: cliUserSecret, defaultTopicPerm: PUB|SUB, defaultGroupPerm: SUB}
`)
	cl := cluster.Start(t, cluster.Configure(func(_ int, cfg *config.Config) { cfg.ACLEnable, cfg.ACLFile = true, file }))
	adm := cl.AdminAs(t, acl.Credentials{AccessKey: "cliAdmin1", SecretKey: "cliAdminSecret"})
	const topic, n = "aclcli", 4
	if _, err := adm.CreateTopic(context.Background(), admin.TopicSpec{Topic: topic, ReadQueueNums: 2, WriteQueueNums: 2}); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("consumer-acl-%d", os.Getpid())
	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{cl.NamesrvAddr()}),
		producer.WithInstanceName(name), producer.WithGroupName("pg-"+name),
		producer.WithCredentials(primitive.Credentials{AccessKey: "cliUser1", SecretKey: "cliUserSecret"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	for i := range n {
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(fmt.Sprint("m", i)))); err != nil {
			t.Fatal(err)
		}
	}

	base := []string{"-n", cl.NamesrvAddr(), "--topic", topic, "--from", "first", "--format", "json", "--log-level", "error", "--idle-timeout", "500ms"}
	env := map[string]string{"RUNNEL_ACCESS_KEY": "cliUser1", "RUNNEL_SECRET_KEY": "cliUserSecret"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want int
	}{
		{"env", env, nil, n},
		{"flags", nil, []string{"--ak", "cliUser1", "--sk", "cliUserSecret"}, n},
		{"none", nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInProcess(context.Background(), func(k string) string { return tc.env[k] }, append(base, tc.args...)...)
			var lines []string
			if out = strings.TrimSuffix(out, "\n"); out != "" {
				lines = strings.Split(out, "\n")
			}
			if tc.want > 0 && code != 0 || len(lines) != tc.want {
				t.Fatalf("exit %d, %d messages, want %d; stderr:\n%s", code, len(lines), tc.want, errOut)
			}
		})
	}
	code, _, errOut := runInProcess(context.Background(), noEnv, append(base, "--ak", "cliUser1")...)
	if code != 1 || !strings.Contains(errOut, "--ak needs --sk") {
		t.Fatalf("--ak alone: exit %d, stderr %q", code, errOut)
	}
}
